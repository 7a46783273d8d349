package e2e

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestFirstGrepPushesAhead: the first grep -r after a read-only mount
// reads most records from the page cache, where the server stored them
// ahead of the reader (FUSE_NOTIFY_STORE), not with a READ each; what
// grep finds and what cat reads afterwards are the records' own bytes.
// The directory is larger than 10,000 entries, past which grep's fts
// reads entries in inode-number order, the order the server watches.
func TestFirstGrepPushesAhead(t *testing.T) {
	needFUSE(t)
	const n = 12000
	recs, want := warmRecords(n)
	src := filepath.Join(t.TempDir(), "first.log")
	recfile.WriteLog(t, src, recs)
	m, snap := countingMount(t, src, "--no-cache")
	mounted := snap()
	if got := grepFiles(t, "needle", m.dir); !equalStrings(got, want) {
		t.Fatalf("first grep -rl found %d names, want %d", len(got), len(want))
	}
	d := snap().sub(mounted)
	t.Logf("first grep -r over %d records: %v", n, d)
	if d["READ"] == 0 || d["READ"] > n/4 {
		t.Errorf("first grep -r over %d records sent %d READ requests (%v): want some, and most records pushed ahead", n, d["READ"], d)
	}
	// Every byte the kernel now holds is the record's.
	h := sha256.New()
	for _, r := range recs {
		h.Write(r)
	}
	r := runCmd(t, "sh", "-c", "cat "+m.dir+"/0* | sha256sum")
	if got, w := strings.Fields(r.stdout + " x")[0], fmt.Sprintf("%x", h.Sum(nil)); got != w {
		t.Fatalf("cat of every record after the first grep: sha256 %s, want %s (%s)", got, w, r.stderr)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index/report"
)

// TestDamageWarning checks that cat and ls print exactly one warning line,
// naming the first damaged offset and the number of damaged ranges, on a
// damaged file whatever the selection (also on the paths that open the file
// twice), and nothing on a clean file or a recycled log's stale tail.
func TestDamageWarning(t *testing.T) {
	// Damage in many-small-10000: a payload byte in block 1 and one in
	// block 5.
	damaged := copyVector(t, "leveldb/many-small-10000.log")
	b, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	b[32768+100] ^= 1
	b[5*32768+100] ^= 1
	if err := os.WriteFile(damaged, b, 0o644); err != nil {
		t.Fatal(err)
	}
	clean := vec(t, "leveldb/many-small-10000.log")
	stale, _ := recycledWAL(t)
	// What the warning must say, from verify's damage list.
	var v report.Verification
	if err := json.Unmarshal([]byte(recfs(t, "verify", "--json", damaged).stdout), &v); err != nil || len(v.Damage) < 2 {
		t.Fatalf("verify: %v, damage %v", err, v.Damage)
	}
	want := fmt.Sprintf("recfs: warning: %s is damaged (%d ranges skipped, the first at offset %d)", damaged, len(v.Damage), v.Damage[0].Offset)
	for _, args := range [][]string{
		{"cat", "--no-cache", "PATH", "2"},
		{"cat", "--no-cache", "PATH", "0-SEQ"}, // reopened for a sequential read
		{"cat", "--no-cache", "PATH"},
		{"ls", "--no-cache", "PATH"},
		{"ls", "--json", "--no-cache", "PATH", "1"},
	} {
		for _, f := range []struct {
			path string
			warn bool
		}{{damaged, true}, {clean, false}, {stale, false}} {
			a := make([]string, len(args))
			for i, s := range args {
				a[i] = strings.ReplaceAll(s, "PATH", f.path)
				if f.path == stale {
					a[i] = strings.ReplaceAll(a[i], "SEQ", "2") // it has 3 records
				} else {
					a[i] = strings.ReplaceAll(a[i], "SEQ", fmt.Sprint(open.SeqMinRecords+10))
				}
			}
			r := recfs(t, a...)
			if r.code != 0 {
				t.Fatalf("%q: exit %d %s", a, r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			switch {
			case !f.warn && r.stderr != "":
				t.Errorf("%q: stderr %q on a file without damage", a, r.stderr)
			case f.warn && (len(lines) != 1 || !strings.HasPrefix(lines[0], want)):
				t.Errorf("%q: stderr %q, want one line starting %q", a, r.stderr, want)
			}
		}
	}
}

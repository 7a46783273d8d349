package e2e

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
	m, snap, _ := countingLog(t, "first.log", recs, "--no-cache")
	mounted := snap()
	grepFinds(t, "first", m.dir, want)
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

// TestPushChangedSourceEIO: records are pushed ahead of a reader only
// when the server could read them as a READ would. After an in-place
// change of the source (a mount that does not follow gives EIO for records
// not read before), a reader going through the records in inode-number
// order (grep -r's order, which the server watches) gets EIO for each, not
// pushed bytes of either version.
func TestPushChangedSourceEIO(t *testing.T) {
	needFUSE(t)
	const n = 2000
	recs, _ := warmRecords(n)
	src := filepath.Join(t.TempDir(), "changed.log")
	offs := recfile.WriteLog(t, src, recs)
	m, snap := countingMount(t, src, "--no-cache")
	// The kernel learns every entry (so every record could be pushed).
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	files := recordsByInode(t, m.dir, ents)
	f, err := os.OpenFile(src, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), offs[n/2]+7); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	before := snap()
	const reads = 300
	for _, fl := range files[:reads] {
		b, err := os.ReadFile(filepath.Join(m.dir, fl.name))
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("record %s of a changed source: %d bytes, %v: want EIO", fl.name, len(b), err)
		}
	}
	if d := snap().sub(before); d["READ"] < reads {
		t.Errorf("%d READ for %d records read in inode order (%v): some were pushed from a changed source", d["READ"], reads, d)
	}
}

// inodeFile is a record file of a mount with its inode and record numbers.
type inodeFile struct {
	name string
	ino  uint64
	rec  int
}

// recordsByInode stats the record files among ents (a listing of dir) and
// returns them in inode-number order, the order grep -r's fts reads them.
func recordsByInode(t *testing.T, dir string, ents []os.DirEntry) []inodeFile {
	t.Helper()
	var files []inodeFile
	for _, e := range ents {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, e.Name()), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG || e.Name() == ".recfs" {
			continue
		}
		rec, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatalf("record file %q: %v", e.Name(), err)
		}
		files = append(files, inodeFile{e.Name(), st.Ino, rec})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].ino < files[j].ino })
	return files
}

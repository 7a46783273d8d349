package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
)

// TestRecipeLiveWAL runs the README's first recipe as written: a live
// write-ahead log mounted with --daemon --follow --decode batch while the
// database writes it; `ls MNT | tail -3` shows the newest records, a batch
// written after the mount appears and `cat MNT/$(ls MNT | tail -1)` shows it
// decoded, and recfs unmount ends it.
func TestRecipeLiveWAL(t *testing.T) {
	needFUSE(t)
	dir := filepath.Join(t.TempDir(), "db")
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 5; i++ {
		if err := db.Put([]byte(fmt.Sprintf("user%05d", i)), []byte("before"), nil); err != nil {
			t.Fatal(err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(logs) == 0 {
		t.Fatalf("no WAL in %s", dir)
	}
	sort.Strings(logs)
	wal := logs[len(logs)-1]
	mnt := newMountDir(t)
	if r := runRecfs(t, "mount", "--daemon", "--follow", "--decode", "batch", "--no-cache", wal, mnt); r.code != 0 {
		t.Fatalf("mount --daemon: %d %s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		if mountedAt(mnt) == "fuse.recfs" {
			runRecfs(t, "unmount", mnt)
		}
	})
	tail3 := func() []string {
		r := runCmd(t, "sh", "-c", "ls "+mnt+" | tail -3")
		if r.code != 0 {
			t.Fatalf("ls | tail -3: %d %s", r.code, r.stderr)
		}
		return strings.Fields(r.stdout)
	}
	if got := tail3(); len(got) != 3 || got[2] != "000004" {
		t.Fatalf("ls | tail -3 before the write: %q, want the last three of five records", got)
	}
	if err := db.Put([]byte("user99999"), []byte("after"), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		got := tail3()
		return len(got) == 3 && got[2] == "000005", fmt.Sprintf("the batch written after the mount did not appear: %q", got)
	})
	r := runCmd(t, "sh", "-c", "cat "+mnt+"/$(ls "+mnt+" | tail -1)")
	if want := "batch seq 6 count 1\nput user99999 after\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("cat of the last record: %d %q %s, want %q", r.code, r.stdout, r.stderr, want)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "000005")); err != nil || string(b) != r.stdout {
		t.Fatalf("record 000005: %q %v", b, err)
	}
	if r := runRecfs(t, "unmount", mnt); r.code != 0 {
		t.Fatalf("recfs unmount: %d %s", r.code, r.stderr)
	}
	if mountedAt(mnt) == "fuse.recfs" {
		t.Fatal("still mounted after recfs unmount")
	}
}

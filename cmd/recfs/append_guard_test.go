package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAppendCommandGuards: a pebble-closed WAL is refused (file untouched);
// a log whose database LOCK is held is refused naming the LOCK, and --force
// appends; mount --force needs --rw.
func TestAppendCommandGuards(t *testing.T) {
	data, err := os.ReadFile(vec(t, "leveldb/pebble-recyclable.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	closed := filepath.Join(dir, "000007.log")
	os.WriteFile(closed, data, 0o644)
	if code, _, e := runIn(t, "x", "append", closed); code == 0 || !strings.Contains(e, "closed by its writer") {
		t.Errorf("append to a closed WAL: exit %d, %q", code, e)
	}
	if after, _ := os.ReadFile(closed); !bytes.Equal(after, data) {
		t.Error("the closed WAL changed")
	}

	db := t.TempDir()
	log := filepath.Join(db, "000003.log")
	if code, _, e := runIn(t, "a", "append", "--create", "leveldb", log); code != 0 {
		t.Fatalf("create: %d %s", code, e)
	}
	lock, err := os.Create(filepath.Join(db, "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(log)
	code, _, e := runIn(t, "b", "append", log)
	if code == 0 || !strings.Contains(e, lock.Name()) || !strings.Contains(e, "--force") {
		t.Errorf("append to a locked database's log: exit %d, %q", code, e)
	}
	if after, _ := os.ReadFile(log); !bytes.Equal(after, before) {
		t.Error("the locked log changed")
	}
	if code, _, e := runIn(t, "b", "append", "--force", log); code != 0 {
		t.Errorf("--force: exit %d, %q", code, e)
	}
	if got := tableRecords(t, log); len(got) != 2 || got[1] != "b" {
		t.Errorf("records after --force: %q", got)
	}
	if code, _, e := runIn(t, "", "mount", "--force", log, t.TempDir()); code != exitUsage || !strings.Contains(e, "--force goes with --rw") {
		t.Errorf("mount --force without --rw: exit %d, %q", code, e)
	}
}

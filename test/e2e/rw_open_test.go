package e2e

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestRWRecordOpenForWriting: an existing record of a --rw mount refuses
// an open for reading and writing with EPERM, so no process can map it
// shared and writable. This is what keeps --rw mounts out of the kernel's
// no-open mode, which would have saved a fifth of a warm cat's time: there
// the kernel opens without asking, O_RDWR succeeds, and bytes stored into
// a MAP_SHARED mapping change the page cache every reader of the record
// is served from, while the source stays as it was (the write-back fails,
// close reports success). The record's bytes read through the mount after
// the attempt are the source's, on both backends.
func TestRWRecordOpenForWriting(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		recs := genRecords(21, 8, 600)
		src := tempLog(t, "rw.log", recs)
		mnt := newMountDir(t)
		startMount(t, src, mnt, "--rw", "--no-cache", "--backend", backend)
		const n = 5
		rec := filepath.Join(mnt, recordName(n, int64(len(recs))))
		if got, err := os.ReadFile(rec); err != nil || !bytes.Equal(got, recs[n]) {
			t.Fatalf("record %d before: %d bytes, %v; want %d bytes", n, len(got), err, len(recs[n]))
		}
		if f, err := os.OpenFile(rec, os.O_RDWR, 0); err == nil {
			t.Errorf("open O_RDWR of record %d succeeded, want EPERM", n)
			scribble(t, f, len(recs[n]))
		} else if !errors.Is(err, syscall.EPERM) {
			t.Errorf("open O_RDWR of record %d: %v, want EPERM", n, err)
		}
		got, err := os.ReadFile(rec)
		if err != nil || !bytes.Equal(got, recs[n]) {
			t.Errorf("record %d read through the mount after the attempt: %q... (%v), want the source's bytes %q...", n, got[:min(len(got), 16)], err, recs[n][:16])
		}
		if r := runRecfs(t, "cat", src, strconv.Itoa(n)); r.code != 0 || r.stdout != string(recs[n]) {
			t.Errorf("record %d in the source: exit %d, %d bytes, want %d bytes: %s", n, r.code, len(r.stdout), len(recs[n]), r.stderr)
		}
	})
}

// scribble stores bytes through a shared writable mapping of f and closes
// it: what a writer could do with a record it managed to open for writing.
func scribble(t *testing.T, f *os.File, size int) {
	t.Helper()
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Logf("shared writable mapping refused: %v", err)
		return
	}
	copy(b, "SCRIBBLED")
	if err := syscall.Munmap(b); err != nil {
		t.Error(err)
	}
}

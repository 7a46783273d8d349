package index

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/recordio"
)

// trailerFile writes a recordio file with a trailer and two items at a new
// path and returns the path and the bytes.
func trailerFile(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v.rio")
	data := recfile.RIOBytes(t, [][]byte{[]byte("one"), []byte("two")}, recordio.WriterOptions{Trailer: true}, []byte("trl"))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// secretFile makes a file the tests must never see changed.
func secretFile(t *testing.T) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	content := []byte("ROOT SECRET CONFIG\n")
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, content
}

func mustEqualFile(t *testing.T, path string, want []byte, what string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed: %d bytes %q…, want %d bytes", what, len(got), got[:min(len(got), 24)], len(want))
	}
}

// TestJournalNeverWrittenThroughSymlink: a symlink planted at the journal
// path before the append is removed unread; one planted between the repair
// and the append makes the append fail with the record file untouched. The
// symlink's target is never written.
func TestJournalNeverWrittenThroughSymlink(t *testing.T) {
	t.Run("before-open", func(t *testing.T) {
		path, _ := trailerFile(t)
		secret, content := secretFile(t)
		if err := os.Symlink(secret, path+RecordIOJournalSuffix); err != nil {
			t.Fatal(err)
		}
		a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := a.Append([]byte("three")); err != nil {
			t.Fatal(err)
		}
		mustEqualFile(t, secret, content, "symlink target")
		data, _ := os.ReadFile(path)
		if items, tr := rioScanAll(t, data); len(items) != 3 || string(tr) != "trl" {
			t.Fatalf("%d items, trailer %q", len(items), tr)
		}
	})
	t.Run("raced-in", func(t *testing.T) {
		path, _ := trailerFile(t)
		secret, content := secretFile(t)
		a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if err := os.Symlink(secret, path+RecordIOJournalSuffix); err != nil {
			t.Fatal(err)
		}
		if err := a.Append([]byte("three")); err != nil {
			t.Fatal(err)
		}
		mustEqualFile(t, secret, content, "symlink target")
		after, _ := os.ReadFile(path)
		if items, tr := rioScanAll(t, after); len(items) != 3 || string(tr) != "trl" {
			t.Fatalf("%d items, trailer %q", len(items), tr)
		}
		if _, err := os.Lstat(path + RecordIOJournalSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("planted entry left: %v", err)
		}
	})
	t.Run("trusted-journal-in-the-way", func(t *testing.T) {
		// A journal of ours appearing under the lock is not removed: the
		// append fails and leaves the file as it was.
		path, data := trailerFile(t)
		a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		j := []byte("not a journal but ours")
		if err := os.WriteFile(path+RecordIOJournalSuffix, j, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := a.Append([]byte("three")); err == nil {
			t.Fatal("append over an existing journal succeeded")
		}
		mustEqualFile(t, path, data, "record file after a failed append")
		mustEqualFile(t, path+RecordIOJournalSuffix, j, "the existing journal")
	})
}

// TestRepairIgnoresUntrustedJournal: a well-formed journal that would make
// the repair write attacker-chosen bytes into the record file is ignored
// when it belongs to another user or is reached through a symlink.
func TestRepairIgnoresUntrustedJournal(t *testing.T) {
	evil := bytes.Repeat([]byte("EVIL"), rioChunk/4)
	j := encodeJournal(rioChunk+int64(len(evil)), rioChunk, evil)
	if _, _, _, ok := decodeJournal(j); !ok {
		t.Fatal("crafted journal does not decode")
	}
	cases := []struct {
		name  string
		plant func(t *testing.T, jpath string)
	}{
		{"foreign-owner", func(t *testing.T, jpath string) {
			if os.Geteuid() != 0 {
				t.Skip("chown to another user needs root")
			}
			if err := os.WriteFile(jpath, j, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(jpath, 1001, 1001); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink", func(t *testing.T, jpath string) {
			other := filepath.Join(t.TempDir(), "j")
			if err := os.WriteFile(other, j, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, jpath); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, jpath string) {
			if err := mkfifo(jpath); err != nil {
				t.Skip(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, data := trailerFile(t)
			jpath := path + RecordIOJournalSuffix
			c.plant(t, jpath)
			done := make(chan error, 1)
			go func() { _, err := RepairRecordIO(path); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("repair hangs on the planted journal")
			}
			mustEqualFile(t, path, data, "record file")
			if _, err := os.Lstat(jpath); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("untrusted journal left in place: %v", err)
			}
		})
	}
	// The same journal owned by us is applied: the check is the owner.
	// (What it writes back is no block, so the repair then refuses to
	// cut it as a torn tail.)
	path, data := trailerFile(t)
	if err := os.WriteFile(path+RecordIOJournalSuffix, j, 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := RepairRecordIO(path); !errors.Is(err, ErrDamagedTail) || !ok {
		t.Fatalf("own journal: repaired=%v err=%v", ok, err)
	}
	mustEqualFile(t, path, append(slices.Clone(data[:rioChunk]), evil...), "record file after its journal")
}

// TestRepairWaitsForAppender: a repair never runs while an appender holds
// the file; it starts only after the appender is closed, and then keeps
// what the appender wrote.
func TestRepairWaitsForAppender(t *testing.T) {
	path, _ := trailerFile(t)
	a, err := OpenRecordIOAppender(path, RecordIOAppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := RepairRecordIO(path); done <- err }()
	select {
	case err := <-done:
		a.Close()
		t.Fatalf("repair ran while an appender held the file (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := a.Append([]byte("three")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if items, _ := rioScanAll(t, data); len(items) != 3 {
		t.Fatalf("%d items after append and repair, want 3", len(items))
	}
}

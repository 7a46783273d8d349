package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/source/local"
)

// TestCreateKeepsLockForAppend counts the append locks taken and the
// database LOCK probes made by Create followed by an append: with
// KeepCreateLock one of each for the pair, two of each without; a second
// append takes its own. Not parallel: it sets the hooks.
func TestCreateKeepsLockForAppend(t *testing.T) {
	var locks, probes int
	locksTaken = func() { locks++ }
	dbProbes = func(string) { probes++ }
	t.Cleanup(func() { locksTaken, dbProbes = nil, nil })
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord, codec.RecordIO} {
		for _, keep := range []bool{false, true} {
			name := fmt.Sprintf("%v-keep=%v", f, keep)
			locks, probes = 0, 0
			p := filepath.Join(t.TempDir(), "f")
			tb, err := Create(context.Background(), p, f, false, Options{CacheDir: "-", Writable: true, DeferCreateSync: true, KeepCreateLock: keep})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := tb.AppendStream(context.Background(), LineRecords(strings.NewReader("a\nb\n")), AppendOptions{Sync: true}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want := 2
			if keep {
				want = 1
			}
			if locks != want || probes != want {
				t.Errorf("%s: Create and Append took %d locks and made %d LOCK probes, want %d and %d", name, locks, probes, want, want)
			}
			if _, err := tb.Append(context.Background(), [][]byte{[]byte("c")}, AppendOptions{}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if locks != want+1 || probes != want+1 {
				t.Errorf("%s: a second Append took %d locks and made %d probes, want 1 and 1", name, locks-want, probes-want)
			}
			if tb.Len() != 3 {
				t.Errorf("%s: %d records, want 3", name, tb.Len())
			}
			tb.Close()
		}
	}
}

// TestKeptCreateLockReleased: the lock Create keeps is held (another
// descriptor cannot take it) until the first append returns, or until
// Close when no append comes.
func TestKeptCreateLockReleased(t *testing.T) {
	t.Parallel()
	held := func(p string) bool {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return false
		}
		if err != syscall.EWOULDBLOCK {
			t.Fatal(err)
		}
		return true
	}
	o := Options{CacheDir: "-", Writable: true, KeepCreateLock: true}
	for _, appendFirst := range []bool{false, true} {
		p := filepath.Join(t.TempDir(), "f")
		tb, err := Create(context.Background(), p, codec.LevelDB, false, o)
		if err != nil {
			t.Fatal(err)
		}
		if !held(p) {
			t.Errorf("append=%v: the lock is not held after Create", appendFirst)
		}
		if appendFirst {
			if _, err := tb.Append(context.Background(), [][]byte{[]byte("r")}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if held(p) {
				t.Errorf("the lock is still held after the first append")
			}
		}
		tb.Close()
		if held(p) {
			t.Errorf("append=%v: the lock is still held after Close", appendFirst)
		}
	}
}

// TestCreateSourceFailsEmpty: a recordio header that cannot be written
// whole into an existing empty file (the file size limit lets one byte
// through, then EFBIG) fails CreateSource and leaves the file empty, not
// holding a partial header a later create would take for another format.
// Not parallel: it lowers the process's file size limit (Go ignores
// SIGXFSZ, so writes past it fail with EFBIG).
func TestCreateSourceFailsEmpty(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "touched")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	src, err := local.New(f, p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 1, Max: old.Max}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	tb, err := CreateSource(ctx, src, codec.RecordIO, true, Options{CacheDir: "-", Writable: true})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err == nil {
		tb.Close()
		t.Fatal("CreateSource wrote a recordio header past the file size limit")
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Errorf("CreateSource: %v, want EFBIG", err)
	}
	if fi, err := os.Stat(p); err != nil {
		t.Error(err)
	} else if fi.Size() != 0 {
		t.Errorf("after the failed create: size %d, want an empty file", fi.Size())
	}
}

// TestCreateWrittenMeanwhile: records another writer put into the new file
// before its create took the lock make the file their format, and the
// table is of that format (its records are theirs), whatever format the
// caller's options preset for reading.
func TestCreateWrittenMeanwhile(t *testing.T) {
	recs := codectest.Records(2, 10, 'a')
	for _, preset := range []codec.Format{codec.Unknown, codec.RecordIO, codec.TFRecord, codec.LevelDB} {
		p := filepath.Join(t.TempDir(), "new.log")
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		// Another writer's leveldb log lands before the lock is taken.
		recfile.WriteLog(t, p, recs)
		src, err := local.New(f, p)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := CreateSource(context.Background(), src, codec.RecordIO, false, Options{CacheDir: "-", Writable: true, Format: preset})
		if err != nil {
			src.Close()
			t.Errorf("preset %v: %v", preset, err)
			continue
		}
		if tb.Format() != codec.LevelDB || tb.Len() != int64(len(recs)) {
			t.Errorf("preset %v: a %v table of %d records, want the other writer's leveldb log of %d", preset, tb.Format(), tb.Len(), len(recs))
		}
		tb.Close()
	}
}

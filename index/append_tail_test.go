package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
)

// tailCase is a writable format and how to write its records.
type tailCase struct {
	name  string
	bytes func(t *testing.T, recs [][]byte) []byte
	// noTorn: a writer that stops in the middle of an append leaves a
	// journal, not a torn tail (recordio with a trailer; see
	// TestRepairToldRollback).
	noTorn bool
}

var tailCases = []tailCase{
	{name: "leveldb", bytes: func(t *testing.T, recs [][]byte) []byte {
		b, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
		return b
	}},
	{name: "leveldb-recyclable", bytes: func(t *testing.T, recs [][]byte) []byte {
		b, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{Recyclable: true, LogNum: 7})
		return b
	}},
	{name: "tfrecord", bytes: func(t *testing.T, recs [][]byte) []byte {
		var b []byte
		for _, r := range recs {
			b = tfrecord.AppendRecord(b, r)
		}
		return b
	}},
	{name: "recordio", bytes: func(t *testing.T, recs [][]byte) []byte {
		return recfile.RIOBytes(t, recs, recordio.WriterOptions{MaxItems: 0}, nil)
	}},
	{name: "recordio-trailer", bytes: func(t *testing.T, recs [][]byte) []byte {
		return recfile.RIOBytes(t, recs, recordio.WriterOptions{MaxItems: 0, Trailer: true}, []byte("trl"))
	}, noTorn: true},
}

// notRecords is what the attack put after two records: 3,000 bytes that
// are no record nor the start of one.
func notRecords() []byte {
	var b []byte
	for range 11 {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return append(b, bytes.Repeat([]byte("x"), 184)...)
}

// tornOf returns the first cut bytes of what an append of one record of
// 100,000 bytes (several leveldb blocks, recordio chunks) adds to good.
func tornOf(t *testing.T, good []byte, cut int) []byte {
	path := filepath.Join(t.TempDir(), "whole")
	recfile.WriteFile(t, path, good)
	tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Append(context.Background(), [][]byte{bytes.Repeat([]byte("T"), 100000)}, AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	more, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(more[:len(good)], good) {
		t.Fatalf("the append changed the bytes before it (%v)", err)
	}
	return more[len(good) : len(good)+cut]
}

// TestAppendRefusesDamagedTail: bytes after the last record that are not a
// torn record stay where they are: the append fails with a *TailError
// naming where they start, and the file is byte-identical (even when the
// table was opened for writing, which repairs). Forced, the bytes are saved
// aside, reported, and the record appended.
func TestAppendRefusesDamagedTail(t *testing.T) {
	t.Parallel()
	recs := [][]byte{[]byte("rec-0"), []byte("rec-1")}
	for _, c := range tailCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			good := c.bytes(t, recs)
			whole := append(slices.Clone(good), notRecords()...)
			path := filepath.Join(t.TempDir(), "f")
			recfile.WriteFile(t, path, whole)
			cache := t.TempDir()
			tb, err := Open(ctx, path, Options{CacheDir: cache, Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			_, err = tb.Append(ctx, [][]byte{[]byte("appended")}, AppendOptions{})
			var te *TailError
			if !errors.As(err, &te) || !errors.Is(err, ErrDamagedTail) {
				t.Fatalf("append: %v, want a *TailError", err)
			}
			kept := len(good)
			if te.Off != int64(kept) || te.Len != int64(len(whole)-kept) || te.Path != path {
				t.Fatalf("error names %d bytes at %d of %s, want %d at %d", te.Len, te.Off, te.Path, len(whole)-kept, kept)
			}
			mustEqualFile(t, path, whole, "file after the refused append")
			if saved, _ := filepath.Glob(filepath.Join(cache, "torn", "*")); len(saved) != 0 {
				t.Fatalf("bytes saved aside though nothing was cut: %v", saved)
			}

			var moved []MovedTail
			ft, err := Open(ctx, path, Options{CacheDir: cache, Writable: true, MoveDamagedTail: true,
				TailMoved: func(m MovedTail) { moved = append(moved, m) }})
			if err != nil {
				t.Fatal(err)
			}
			defer ft.Close()
			if _, err := ft.Append(ctx, [][]byte{[]byte("appended")}, AppendOptions{}); err != nil {
				t.Fatalf("forced append: %v", err)
			}
			if len(moved) != 1 || moved[0].Reason != MovedForced || moved[0].Off != int64(kept) || moved[0].Path != path {
				t.Fatalf("told %+v", moved)
			}
			if b, err := os.ReadFile(moved[0].SavedTo); err != nil || !bytes.Equal(b, whole[kept:]) {
				t.Fatalf("saved bytes differ (%d bytes, %v)", len(b), err)
			}
			if ft.Len() != 3 || string(readRecord(t, ft, 2)) != "appended" || len(ft.Damage()) != 0 {
				t.Fatalf("after the forced append: %d records, damage %v", ft.Len(), ft.Damage())
			}
		})
	}
}

// TestAppendMovesTornTail: a record a writer left half-written is moved
// aside (saved, then cut) by the append, which says so; the appended
// record follows the intact ones. A table opened for writing moves it at
// once.
func TestAppendMovesTornTail(t *testing.T) {
	t.Parallel()
	recs := [][]byte{[]byte("rec-0"), []byte("rec-1")}
	for _, c := range tailCases {
		if c.noTorn {
			continue
		}
		for _, cut := range []int{5, 40000, 70000} {
			for _, writable := range []bool{false, true} {
				c, cut, writable := c, cut, writable
				name := c.name + "/" + map[bool]string{false: "append", true: "writable-open"}[writable]
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					good := c.bytes(t, recs)
					kept := len(good)
					torn := tornOf(t, good, cut)
					path := filepath.Join(t.TempDir(), "f")
					recfile.WriteFile(t, path, append(slices.Clone(good), torn...))
					var moved []MovedTail
					tb, err := Open(ctx, path, Options{CacheDir: t.TempDir(), Writable: writable,
						TailMoved: func(m MovedTail) { moved = append(moved, m) }})
					if err != nil {
						t.Fatal(err)
					}
					defer tb.Close()
					if writable && len(moved) != 1 {
						t.Fatalf("writable open told %+v", moved)
					}
					if _, err := tb.Append(ctx, [][]byte{[]byte("appended")}, AppendOptions{}); err != nil {
						t.Fatalf("append after a torn tail of %d bytes: %v", cut, err)
					}
					if len(moved) != 1 || moved[0].Reason != MovedTorn || moved[0].Off != int64(kept) || moved[0].Len != int64(cut) {
						t.Fatalf("told %+v", moved)
					}
					if b, err := os.ReadFile(moved[0].SavedTo); err != nil || !bytes.Equal(b, torn) {
						t.Fatalf("saved bytes differ (%d bytes, %v)", len(b), err)
					}
					if tb.Len() != 3 || string(readRecord(t, tb, 2)) != "appended" || len(tb.Damage()) != 0 {
						t.Fatalf("after the append: %d records, damage %v", tb.Len(), tb.Damage())
					}
				})
			}
		}
	}
}

// TestRepairToldRollback: an append to a recordio file with a trailer that
// stopped after its journal was made durable is rolled back as the journal
// says, and the repair says what it cut.
func TestRepairToldRollback(t *testing.T) {
	t.Parallel()
	good := recfile.RIOBytes(t, [][]byte{[]byte("a")}, recordio.WriterOptions{Trailer: true}, []byte("tr"))
	toff := int64(len(good) - rioChunk)
	j := encodeJournal(int64(len(good)), toff, good[toff:])
	m := newMemFS()
	// New blocks half written over the old trailer.
	m.files["/f"] = append(slices.Clone(good[:toff]), bytes.Repeat([]byte{9}, 50000)...)
	m.files["/f"+RecordIOJournalSuffix] = j
	var moved []MovedTail
	p := tailPolicy{told: func(mt MovedTail) { moved = append(moved, mt) }}
	if ok, err := repairPath(m, "/f", p); err != nil || !ok {
		t.Fatalf("repaired=%v err=%v", ok, err)
	}
	if !bytes.Equal(m.files["/f"], good) {
		t.Fatal("not rolled back")
	}
	if len(moved) != 1 || moved[0].Reason != MovedRollback || moved[0].Off != toff || moved[0].Len != 50000 || moved[0].SavedTo != "" {
		t.Fatalf("told %+v", moved)
	}
}

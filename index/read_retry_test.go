package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
)

// TestReadRetryRule: each case of readAt's rule for a read whose snapshot
// stopped being the table's. The reader first asks Size(n), then reads
// record n whole, pinned to the generation it saw (ReadAtGeneration: an
// open file) or not (ReadAt); where the case says so, the read is held
// as it starts reading its checkpoint's stored window while something
// else happens to the table. A gzip table whose stored window lies heals
// with every record in place (the same generation); the leveldb log's
// saved table numbers records one lower after record 0 ("leveldb record
// as padding"), so its heal moves the generation: record 2 keeps its
// size (3 bytes) there, record 1 does not. A Refresh of a rewritten
// file moves the generation with every record the same size: a read it
// cut short is not retried even so, lest it return the new file's bytes.
// (Not parallel: it sets a package hook.)
func TestReadRetryRule(t *testing.T) {
	type opened struct {
		tb   *Table
		n    int64  // the record read
		want []byte // its bytes in the table that serves it
		// held, when not nil, is called while the read is held at its
		// window's pread (the table's first blob read after opening).
		held func(tb *Table)
	}
	// gzip opens the gzip fixture's saved table, its window f.k damaged
	// or not, reading the record pick chooses.
	gzip := func(damaged bool, pick func(f savedGzipTable, s *snapshot) int64, held func(f savedGzipTable, tb *Table)) func(t *testing.T) opened {
		return func(t *testing.T) opened {
			f := savedGzip(t, "mem://retry.tfrecord.gz")
			if damaged {
				f.damageWindow(t)
			}
			tb, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tb.Close() })
			if tb.Info().Loaded != "cached" {
				t.Fatalf("%s table, want the saved one", tb.Info().Loaded)
			}
			o := opened{tb: tb, n: pick(f, tb.s())}
			if o.n < 0 {
				t.Fatal("no record for the case")
			}
			o.want = gzipFixture().recs[o.n]
			if held != nil {
				o.held = func(tb *Table) { held(f, tb) }
			}
			return o
		}
	}
	damaged := func(f savedGzipTable, s *snapshot) int64 { return f.damagedRecord(s) }
	windowed := func(f savedGzipTable, s *snapshot) int64 { return f.windowedRecord(s) }
	heal := func(f savedGzipTable, tb *Table) {
		n := f.damagedRecord(tb.s())
		if _, err := tb.ReadAt(n, make([]byte, tb.Size(n)), 0); err != nil {
			t.Errorf("the read that heals the table: %v", err)
		}
	}
	closeTable := func(_ savedGzipTable, tb *Table) { tb.Close() }
	// log opens the leveldb log whose saved table lies, reading record n.
	log := func(n int64) func(t *testing.T) opened {
		return func(t *testing.T) opened {
			l := lies[0]
			path, cache := plantLie(t, l)
			tb, err := Open(context.Background(), path, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tb.Close() })
			if tb.Info().Loaded != "cached" {
				t.Fatalf("%s table, want the saved one", tb.Info().Loaded)
			}
			return opened{tb: tb, n: n, want: l.recs[n]}
		}
	}
	// rewritten opens the gzip fixture, a local file, from its saved
	// table, reading a record with a stored window; while that read is
	// held, another file whose records are the same sizes (record n's
	// bytes are not the same) is renamed onto the path and the table
	// refreshed: a new generation that does not heal the read's.
	rewritten := func(t *testing.T) opened {
		ctx := context.Background()
		fx := gzipFixture()
		dir := t.TempDir()
		path := filepath.Join(dir, "retry.tfrecord.gz")
		if err := os.WriteFile(path, fx.z, 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{CacheDir: t.TempDir()}
		built, err := Open(ctx, path, o)
		if err != nil {
			t.Fatal(err)
		}
		f := savedGzipTable{x: built.s().tab.(*tfrTable).seek, k: -1}
		built.Close()
		tb, err := Open(ctx, path, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		if tb.Info().Loaded != "cached" {
			t.Fatalf("%s table, want the saved one", tb.Info().Loaded)
		}
		n := f.windowedRecord(tb.s())
		if n < 0 {
			t.Fatal("no record for the case")
		}
		held := func(tb *Table) {
			recs := slices.Clone(fx.recs)
			recs[n] = bytes.ToUpper(recs[n])
			if bytes.Equal(recs[n], fx.recs[n]) {
				t.Errorf("record %d has no lower case letter to change", n)
			}
			next := filepath.Join(dir, "next")
			if err := os.WriteFile(next, gzipRecords(recs), 0o644); err != nil {
				t.Error(err)
			}
			if err := os.Rename(next, path); err != nil {
				t.Error(err)
			}
			if changed, err := tb.Refresh(ctx); !changed || err != nil {
				t.Errorf("refresh of the rewritten file: changed %v, %v", changed, err)
			}
		}
		return opened{tb: tb, n: n, want: fx.recs[n], held: held}
	}
	for _, c := range []struct {
		name    string
		open    func(t *testing.T) opened
		pinned  bool
		empty   bool  // a read of nothing
		err     error // nil: the record's bytes
		sameGen bool  // the generation after the read is the one before
		kept    bool  // the table keeps its snapshot (else the read's is replaced)
	}{
		{name: "lie found, same generation", open: gzip(true, damaged, nil), sameGen: true},
		{name: "lie found, same generation, pinned", open: gzip(true, damaged, nil), pinned: true, sameGen: true},
		{name: "swapped by a heal, same generation", open: gzip(true, windowed, heal), sameGen: true},
		{name: "swapped by a heal, same generation, pinned", open: gzip(true, windowed, heal), pinned: true, sameGen: true},
		{name: "lie found, new generation, same size", open: log(2)},
		{name: "lie found, new generation, same size, pinned", open: log(2), pinned: true, err: ErrChanged},
		{name: "lie found, new generation, other size", open: log(1), err: ErrChanged},
		{name: "lie found, new generation, other size, pinned", open: log(1), pinned: true, err: ErrChanged},
		{name: "lie found, new generation, read of nothing", open: log(1), empty: true},
		{name: "swapped by a refresh, new generation, same size", open: rewritten, err: ErrChanged},
		{name: "swapped by a refresh, new generation, same size, pinned", open: rewritten, pinned: true, err: ErrChanged},
		{name: "table closed", open: gzip(false, windowed, closeTable), err: context.Canceled, sameGen: true, kept: true},
		{name: "table closed, pinned", open: gzip(false, windowed, closeTable), pinned: true, err: context.Canceled, sameGen: true, kept: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.open(t)
			tb := o.tb
			gen, s0 := tb.Generation(), tb.s()
			p := make([]byte, tb.Size(o.n))
			if c.empty {
				p = nil
			}
			if o.held != nil {
				blob := s0.tab.(savedHolder).savedBlob()
				entered, release := make(chan struct{}), make(chan struct{})
				var first atomic.Bool
				hook := func(b *cacheBlob) {
					if b == blob && !first.Swap(true) {
						close(entered)
						<-release
					}
				}
				blobReadHook.Store(&hook)
				t.Cleanup(func() { blobReadHook.Store(nil) })
				go func() {
					<-entered
					o.held(tb)
					close(release)
				}()
			}
			var k int
			var err error
			if c.pinned {
				k, err = tb.ReadAtGeneration(gen, o.n, p, 0)
			} else {
				k, err = tb.ReadAt(o.n, p, 0)
			}
			blobReadHook.Store(nil)
			switch {
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("read of record %d: %d bytes, %v; want %v", o.n, k, err, c.err)
			case c.err == nil && (err != nil || !bytes.Equal(p[:k], o.want[:len(p)])):
				t.Fatalf("read of record %d: %.20q, %v; want %.20q", o.n, p[:k], err, o.want)
			}
			if replaced := tb.s() != s0; replaced == c.kept {
				t.Fatalf("snapshot replaced %v, want %v: the case does not test what it says", replaced, !c.kept)
			}
			if moved := tb.Generation() != gen; moved == c.sameGen {
				t.Errorf("generation %d after the read, %d before", tb.Generation(), gen)
			}
			if c.empty && tb.Size(o.n) != int64(len(o.want)) {
				t.Errorf("size of record %d after a read of nothing: %d, want %d", o.n, tb.Size(o.n), len(o.want))
			}
		})
	}
}

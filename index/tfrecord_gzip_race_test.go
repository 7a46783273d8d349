package index

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
)

// TestTFRecordGzipReadRacingHeal: a read of a sealed gzip table that is
// under way when another read finds a stored window damaged (and the
// table is scanned afresh, its old cache file closed) finishes with the
// record's bytes from the new table: no EINTR (os.ErrClosed from the
// closed cache file) to a reader that did not interrupt, and no
// ErrChanged to a reader holding the generation (an open file): the
// table scanned afresh has every record where the damaged one had it, so
// the generation stays. The first reader is held, by a hook, just as it
// starts reading its checkpoint's window from the cache file, until the
// second read has healed the table. (Not parallel: it sets a package
// hook.)
func TestTFRecordGzipReadRacingHeal(t *testing.T) {
	f := savedGzip(t, "mem://race.tfrecord.gz")
	f.damageWindow(t)
	tb, err := OpenSource(context.Background(), &countedSource{data: f.src.data, key: f.src.key}, f.o)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	s0 := tb.s()
	if tb.Info().Loaded != "cached" || s0.proof != nil {
		t.Fatalf("%s table, proof %v: want the sealed table believed", tb.Info().Loaded, s0.proof)
	}
	tt := s0.tab.(*tfrTable)
	nBad, nA := f.damagedRecord(s0), f.windowedRecord(s0)
	if nBad < 0 || nA < 0 {
		t.Fatalf("no records for the test: damaged span's %d, another span's %d", nBad, nA)
	}
	recs := gzipFixture().recs
	gen, blob := tb.Generation(), tt.savedBlob()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hook := func(b *cacheBlob) {
		if b != blob {
			return
		}
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release
		}
	}
	blobReadHook.Store(&hook)
	t.Cleanup(func() { blobReadHook.Store(nil) })
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b := make([]byte, tb.Size(nA))
		_, err := tb.ReadAtGeneration(gen, nA, b, 0)
		done <- result{b, err}
	}()
	<-entered
	b := make([]byte, tb.Size(nBad))
	_, err = tb.ReadAtGeneration(gen, nBad, b, 0)
	close(release)
	a := <-done
	blobReadHook.Store(nil)
	if err != nil || !bytes.Equal(b, recs[nBad]) {
		t.Errorf("the read that met the damaged window (record %d): %v, right bytes %v", nBad, err, bytes.Equal(b, recs[nBad]))
	}
	if a.err != nil || !bytes.Equal(a.b, recs[nA]) {
		t.Errorf("the read under way meanwhile (record %d): %v, right bytes %v", nA, a.err, bytes.Equal(a.b, recs[nA]))
	}
	if tb.s() == s0 || tb.Info().Loaded != "built" {
		t.Fatalf("%s table, replaced %v: want it scanned afresh", tb.Info().Loaded, tb.s() != s0)
	}
	for _, n := range []int64{0, nA, nBad, tb.Len() - 1} {
		b := make([]byte, tb.Size(n))
		if _, err := tb.ReadAtGeneration(gen, n, b, 0); err != nil || !bytes.Equal(b, recs[n]) {
			t.Errorf("record %d at the generation read before the heal: %v, right bytes %v", n, err, bytes.Equal(b, recs[n]))
		}
	}
}

// damageWindow rewrites f's cache file with one bit of checkpoint f.k's
// stored window flipped.
func (f savedGzipTable) damageWindow(t *testing.T) {
	t.Helper()
	at := int64(len(f.b)) - cacheTrailer - f.blob
	for _, p := range f.x.Points[:f.k] {
		at += int64(len(p.Window))
	}
	bad := bytes.Clone(f.b)
	bad[at+int64(len(f.x.Points[f.k].Window))/2] ^= 0x04
	if err := os.WriteFile(f.cf, bad, 0o644); err != nil {
		t.Fatal(err)
	}
}

// inSpan returns a record of s lying wholly in checkpoint i's span, or -1.
func (f savedGzipTable) inSpan(s *snapshot, i int) int64 {
	tt := s.tab.(*tfrTable)
	for n := range s.n {
		r := tt.get(n)
		if r.Off >= f.x.Points[i].Out && r.Off+r.Len+16 <= f.x.Points[i+1].Out {
			return n
		}
	}
	return -1
}

// damagedRecord returns a record of s read from checkpoint f.k (the one
// damageWindow damages), or -1.
func (f savedGzipTable) damagedRecord(s *snapshot) int64 { return f.inSpan(s, f.k) }

// windowedRecord returns a record of s read from a checkpoint other than
// f.k with a stored window (not a member start), or -1.
func (f savedGzipTable) windowedRecord(s *snapshot) int64 {
	for j := 1; j+1 < len(f.x.Points); j++ {
		if j != f.k && !f.x.Points[j].Member && len(f.x.Points[j].Window) > 0 {
			if n := f.inSpan(s, j); n >= 0 {
				return n
			}
		}
	}
	return -1
}

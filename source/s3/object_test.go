package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/source"
)

const mib = 1 << 20

// readChunks reads [off, off+n) in FUSE-sized 128 KiB reads.
func readChunks(t *testing.T, o *Object, off, n int64) []byte {
	t.Helper()
	out := make([]byte, 0, n)
	for pos := off; pos < off+n; {
		c := min(int64(128<<10), off+n-pos)
		buf := make([]byte, c)
		k, err := o.ReadAt(buf, pos)
		if err != nil && !(err == io.EOF && int64(k) == c) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", c, pos, k, err)
		}
		out = append(out, buf[:k]...)
		pos += int64(k)
	}
	return out
}

// A cat of one record: one HEAD, then GETs of only the blocks the record
// touches, every one pinned with If-Match.
func TestOneRecordRequests(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(8*mib, 1)
	f.put("b/log", data)
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "log")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	off, n := int64(3*mib+900<<10), int64(300<<10) // spans blocks 3 and 4
	if got := readChunks(t, o, off, n); !bytes.Equal(got, data[off:off+n]) {
		t.Fatal("record bytes differ")
	}
	if h := f.requests("HEAD"); len(h) != 1 {
		t.Errorf("%d HEADs, want 1", len(h))
	}
	var fetched int64
	for _, g := range f.requests("GET") {
		lo, hi := parseRange(t, g.rng)
		if lo < 3*mib || hi >= 5*mib {
			t.Errorf("GET %s outside the record's blocks [3 MiB, 5 MiB)", g.rng)
		}
		fetched += hi - lo + 1
	}
	if fetched != 2*mib {
		t.Errorf("fetched %d bytes, want the 2 blocks (%d)", fetched, 2*mib)
	}
	if s := o.Stats(); s.Heads != 1 || s.BytesFetched != 2*mib {
		t.Errorf("stats %+v", s)
	}
}

// A sequential reader's requests grow to MaxRequest and every byte is fetched
// once.
func TestSequentialGrows(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(40*mib, 2)
	f.put("b/big", data)
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "big")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := readChunks(t, o, 0, int64(len(data))); !bytes.Equal(got, data) {
		t.Fatal("bytes differ")
	}
	gets := f.requests("GET")
	var largest, total int64
	for _, g := range gets {
		lo, hi := parseRange(t, g.rng)
		largest = max(largest, hi-lo+1)
		total += hi - lo + 1
	}
	if largest < 8*mib || largest > 16*mib {
		t.Errorf("largest GET %d bytes, want 8–16 MiB", largest)
	}
	if total != int64(len(data)) {
		t.Errorf("fetched %d bytes of %d: blocks fetched twice or not at all", total, len(data))
	}
	if len(gets) > 8 {
		t.Errorf("%d GETs for 40 MiB", len(gets))
	}
}

// Concurrent readers of one block share one GET.
func TestSingleFlight(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(4*mib, 3)
	f.put("b/k", data)
	f.delay = 100 * time.Millisecond
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(mib + i*1000)
			buf := make([]byte, 4096)
			if _, err := o.ReadAt(buf, off); err != nil {
				errs <- err
			} else if !bytes.Equal(buf, data[off:off+4096]) {
				errs <- errors.New("bytes differ")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if g := f.requests("GET"); len(g) != 1 {
		t.Errorf("%d GETs for one block, want 1", len(g))
	}
}

// GETs in flight never exceed MaxInFlight, and the cache stays within its
// budget.
func TestInFlightAndBudget(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(32*mib, 4)
	f.put("b/k", data)
	f.delay = 20 * time.Millisecond
	o, err := testClient(t, srv, Options{MaxInFlight: 3, CacheBytes: 4 * mib}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64((i * 7 % 32) * mib)
			buf := make([]byte, 1000)
			if _, err := o.ReadAt(buf, off+5); err != nil || !bytes.Equal(buf, data[off+5:off+1005]) {
				t.Errorf("read at %d: %v", off, err)
			}
		}()
	}
	wg.Wait()
	if m := f.maxInFlight.Load(); m > 3 || m < 2 {
		t.Errorf("max GETs in flight %d, want 2..3", m)
	}
	o.mu.Lock()
	cached := o.cached
	o.mu.Unlock()
	if cached > 4*mib {
		t.Errorf("cache holds %d bytes, budget %d", cached, 4*mib)
	}
}

// An object overwritten after Open fails reads with ErrChanged — also reads
// of blocks cached before the change — and a new Open sees the new version.
func TestChanged(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		name := "if-match"
		if ignore {
			name = "store-ignores-if-match"
		}
		t.Run(name, func(t *testing.T) {
			f, srv := newFake(t)
			f.ignoreIf = ignore
			f.put("b/k", pattern(4*mib, 5))
			c := testClient(t, srv, Options{})
			o, err := c.Open(context.Background(), "b", "k")
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			buf := make([]byte, 100)
			if _, err := o.ReadAt(buf, 0); err != nil {
				t.Fatal(err)
			}
			old := o.Identity()
			newData := pattern(4*mib, 6)
			f.put("b/k", newData)
			if _, err := o.ReadAt(buf, 2*mib); !errors.Is(err, source.ErrChanged) {
				t.Fatalf("read after overwrite: %v, want ErrChanged", err)
			}
			if _, err := o.ReadAt(buf, 0); !errors.Is(err, source.ErrChanged) {
				t.Fatalf("cached read after change: %v, want ErrChanged", err)
			}
			if !ignore {
				if g := f.requests("GET"); g[len(g)-1].status != 412 {
					t.Errorf("last GET status %d, want 412", g[len(g)-1].status)
				}
			}
			id, _, err := o.Stat()
			if err != nil || id == old || id.Key != old.Key {
				t.Errorf("Stat after change: %v %v (opened as %v)", id, err, old)
			}
			o2, err := c.Open(context.Background(), "b", "k")
			if err != nil {
				t.Fatal(err)
			}
			defer o2.Close()
			if _, err := o2.ReadAt(buf, 2*mib); err != nil || !bytes.Equal(buf, newData[2*mib:2*mib+100]) {
				t.Errorf("reopened read: %v", err)
			}
		})
	}
}

// ReadAt follows io.ReaderAt at the end of the object.
func TestReadAtEOF(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(mib+10, 7)
	f.put("b/k", data)
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	buf := make([]byte, 100)
	n, err := o.ReadAt(buf, mib-50)
	if n != 60 || err != io.EOF || !bytes.Equal(buf[:n], data[mib-50:]) {
		t.Errorf("tail read = %d, %v", n, err)
	}
	if n, err := o.ReadAt(buf, mib+10); n != 0 || err != io.EOF {
		t.Errorf("read at size = %d, %v", n, err)
	}
	if _, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
}

// Two sequential readers of one object within a tight budget fetch every
// byte once: blocks a reader has passed go before blocks read ahead.
func TestTwoStreamsFetchOnce(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(48*mib, 8)
	f.put("b/k", data)
	o, err := testClient(t, srv, Options{CacheBytes: 24 * mib}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	for half := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(half * 24 * mib)
			buf := make([]byte, 32<<10)
			for pos := off; pos < off+24*mib; pos += int64(len(buf)) {
				if _, err := o.ReadAt(buf, pos); err != nil || !bytes.Equal(buf, data[pos:pos+int64(len(buf))]) {
					t.Errorf("read at %d: %v", pos, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s := o.Stats(); s.BytesFetched != int64(len(data)) {
		t.Errorf("fetched %d bytes of %d in %d GETs", s.BytesFetched, len(data), s.Gets)
	}
}

// A block is served as soon as its bytes have arrived, not when the whole
// multi-block GET it is part of ends: a sequential scan consumes a large
// GET while it streams.
func TestBlockReadyWhileGETStreams(t *testing.T) {
	f, srv := newFake(t)
	data := pattern(4*mib, 5)
	f.put("b/k", data)
	f.stall, f.stallAfter = make(chan struct{}), mib+mib/2
	o, err := testClient(t, srv, Options{}).Open(context.Background(), "b", "k")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	whole := make(chan error, 1)
	big := make([]byte, 4*mib)
	go func() {
		_, err := o.ReadAt(big, 0) // one GET of the four blocks
		whole <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); len(f.requests("GET")) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no GET started")
		}
		time.Sleep(time.Millisecond)
	}
	first := make(chan error, 1)
	buf := make([]byte, 4096)
	go func() {
		_, err := o.ReadAt(buf, 1000)
		first <- err
	}()
	select {
	case err := <-first:
		if err != nil || !bytes.Equal(buf, data[1000:1000+4096]) {
			t.Errorf("read of the first block: %v (bytes equal %v)", err, bytes.Equal(buf, data[1000:1000+4096]))
		}
	case <-time.After(3 * time.Second):
		t.Error("the first block waited for the rest of its GET")
	}
	close(f.stall)
	if err := <-whole; err != nil || !bytes.Equal(big, data) {
		t.Errorf("whole read: %v (bytes equal %v)", err, bytes.Equal(big, data))
	}
	if g := f.requests("GET"); len(g) != 1 {
		t.Errorf("%d GETs, want 1", len(g))
	}
}

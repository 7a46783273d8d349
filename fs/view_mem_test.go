package fs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/decode"
)

// TestViewCacheBoundedPerProcess: renderings cached by many views (one
// per file of a directory mount) stay within one budget for the process,
// not one per view.
func TestViewCacheBoundedPerProcess(t *testing.T) {
	raw := [][]byte{bytes.Repeat([]byte("r"), 2<<20)} // shared by every source
	quad := func() *decode.Session {
		return testSession("quad", 0, func(dst, rec []byte) []byte {
			for range 4 {
				dst = append(dst, rec...)
			}
			return dst
		})
	} // 8 MiB a rendering
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	var views []Records
	buf := make([]byte, 4096)
	for range 40 {
		v := View(&fakeRecords{recs: raw}, quad(), "")
		if _, err := v.ReadAt(0, buf, 0); err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	grown := int64(heap()) - int64(before)
	runtime.KeepAlive(views)
	if limit := int64(2 * viewCacheBudget); grown > limit {
		t.Errorf("40 views of one 8 MiB rendering each hold %d MiB (limit %d MiB)", grown>>20, limit>>20)
	}
	t.Logf("heap grew %d MiB", grown>>20)
}

// TestViewLargeRendersOneAtATime: renderings of large records, which a
// hostile record can make some twenty times its size, are made one at a
// time in the process, so that readers of many such records at once do
// not hold many of them. The first rendering holds until every other
// reader has found it under way and waits (largeRenderWaits), or until a
// second rendering begins beside it: no scheduling luck can pass it.
func TestViewLargeRendersOneAtATime(t *testing.T) {
	const readers = 8
	var now, most atomic.Int64
	var held atomic.Bool
	waits := largeRenderWaits.Load()
	slow := testSession("slow", 0, func(dst, rec []byte) []byte {
		if k := now.Add(1); k > most.Load() {
			most.Store(k)
		}
		if held.CompareAndSwap(false, true) {
			deadline := time.Now().Add(30 * time.Second)
			for largeRenderWaits.Load()-waits < readers-1 && most.Load() == 1 {
				if time.Now().After(deadline) {
					t.Errorf("after 30 s: %d of %d other renderings waited, none began", largeRenderWaits.Load()-waits, readers-1)
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		now.Add(-1)
		return append(dst, rec...)
	})
	big := bytes.Repeat([]byte("b"), viewLargeRecord+1)
	var wg sync.WaitGroup
	for i := range readers {
		v := View(&fakeRecords{recs: [][]byte{big, big, big}}, slow, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.ReadAt(int64(i%3), make([]byte, 10), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d large renderings at once, want 1", m)
	}
}

// TestViewListThenRead: sizing every record of a view (what a listing
// does, before grep reads the files in the same order), then reading
// each, renders each record once, for more records than renderCache
// holds.
func TestViewListThenRead(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	const n = 20 * viewCacheEntries
	src := &fakeRecords{}
	for i := range n {
		src.recs = append(src.recs, fmt.Appendf(nil, "record %d", i))
	}
	v := View(src, upperView(&calls), "")
	sizes := make([]int64, n)
	for i := range int64(n) {
		size, err := v.(sizeErrer).SizeErr(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = size
	}
	buf := make([]byte, 64)
	for i := range int64(n) {
		k, err := v.ReadAt(i, buf, 0)
		if err != io.EOF {
			t.Fatalf("record %d: %v", i, err)
		}
		if want := "<" + strings.ToUpper(string(src.recs[i])) + ">\n"; string(buf[:k]) != want || int64(k) != sizes[i] {
			t.Fatalf("record %d: read %q (size %d), want %q", i, buf[:k], sizes[i], want)
		}
	}
	if c := calls.Load(); c != n {
		t.Errorf("%d renders for %d records sized then read", c, n)
	}
}

// TestSizedStoreBounded: the store of renderings made to size records
// keeps within its budget by dropping the oldest, and keeps no rendering
// larger than its budget.
func TestSizedStoreBounded(t *testing.T) {
	t.Parallel()
	const each = 1000
	c := sizedStore{budget: 10 * (each + viewSizedOverhead)}
	vs := &viewRecords{}
	text := bytes.Repeat([]byte("t"), each)
	for i := range int64(5000) {
		c.put(viewKey{vs, 1, i}, text)
		if c.bytes > c.budget {
			t.Fatalf("after %d renderings: %d bytes held, budget %d", i+1, c.bytes, c.budget)
		}
	}
	if len(c.m) != 10 || len(c.queue)-c.head != 10 || len(c.queue) > 2048 {
		t.Errorf("%d renderings held, %d queued (%d with the dropped)", len(c.m), len(c.queue)-c.head, len(c.queue))
	}
	for i := range int64(5000) {
		if _, ok := c.get(viewKey{vs, 1, i}); ok != (i >= 4990) {
			t.Errorf("rendering %d held: %v", i, ok)
		}
	}
	c.put(viewKey{vs, 2, 0}, make([]byte, c.budget))
	if _, ok := c.get(viewKey{vs, 2, 0}); ok || len(c.m) != 10 {
		t.Errorf("a rendering above the budget was kept (or emptied the store): %v, %d held", ok, len(c.m))
	}
}

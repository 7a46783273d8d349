package fs

import (
	"bytes"
	"runtime"
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
	var views []Source
	buf := make([]byte, 4096)
	for range 40 {
		v := View(&fakeSource{recs: raw}, quad(), "")
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
// not hold many of them.
func TestViewLargeRendersOneAtATime(t *testing.T) {
	var now, most atomic.Int64
	slow := testSession("slow", 0, func(dst, rec []byte) []byte {
		if k := now.Add(1); k > most.Load() {
			most.Store(k)
		}
		time.Sleep(20 * time.Millisecond)
		now.Add(-1)
		return append(dst, rec...)
	})
	big := bytes.Repeat([]byte("b"), viewLargeRecord+1)
	var wg sync.WaitGroup
	for i := range 8 {
		v := View(&fakeSource{recs: [][]byte{big, big, big}}, slow, "")
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

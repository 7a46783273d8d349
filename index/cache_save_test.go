package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
)

// saveBuf is encodeBuf (cache.go), spelled out for the test.
const saveBuf = 1<<20 + 1<<16*8

// TestSaveCacheAllocates: saving a large table encodes it straight into
// the cache file through one buffer of encodeBuf bytes: not through a
// pipe and a copy loop, nor a buffer that grows by doubling (each of
// which costs a fresh process page faults and a save its time). The saved
// file loads back as the same table.
func TestSaveCacheAllocates(t *testing.T) {
	var file []byte
	n := 0
	for off := int64(0); n < 300_000; off += 500 {
		rs := make([]codectest.KafkaRecord, 500)
		for i := range rs {
			rs[i] = codectest.KafkaRecord{Value: fmt.Appendf(nil, "v%d", n)}
			n++
		}
		file = append(file, codectest.KafkaBatch(codectest.KafkaBatchSpec{BaseOffset: off, Records: rs, ProducerID: -1})...)
	}
	tb, err := Build(context.Background(), bytes.NewReader(file), int64(len(file)), Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	s := tb.snap.Load()
	s.id.size = int64(len(file)) // the bound of a cache file follows its source's size
	dir := t.TempDir()
	save := func(name string) string {
		path := filepath.Join(dir, name)
		if err := saveCache(context.Background(), path, s, Options{}); err != nil {
			t.Fatal(err)
		}
		return path
	}
	save("warm.idx")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	path := save("x.idx")
	runtime.ReadMemStats(&after)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 2*saveBuf {
		t.Fatalf("the saved table has %d bytes, want more than %d for the test to mean anything", fi.Size(), 2*saveBuf)
	}
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(saveBuf+64<<10); got > bound {
		t.Errorf("saving a table of %d bytes allocated %d bytes, want at most %d", fi.Size(), got, bound)
	}
	loaded, err := loadCache(context.Background(), path, s.id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.n != s.n || loaded.tab.(*kafkaTable).recs.len() != int64(n) {
		t.Fatalf("loaded %d records (%d in the table), want %d", loaded.n, loaded.tab.(*kafkaTable).recs.len(), n)
	}
}

package index

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/tfrecord"
)

// TestTFRecordGzipReadContext: a read of the end of a long compressed
// span (a 32 MiB record of zeros, one checkpoint) whose caller has given
// up (its context done: an interrupted FUSE request) stops at once, with
// an error matching context.Canceled, after at most one chunk of output;
// the table then serves the same read, and ReadAtGenerationContext stops
// as ReadAtContext does.
func TestTFRecordGzipReadContext(t *testing.T) {
	t.Parallel()
	const size = 32 << 20
	file := tfrecord.AppendRecord(tfrecord.AppendRecord(nil, []byte("before")), make([]byte, size))
	src := &countedSource{data: codectest.Gzip(file), key: "mem://stop.tfrecord.gz"}
	tb, err := OpenSource(context.Background(), src, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if tb.Len() != 2 || tb.Size(1) != size {
		t.Fatalf("%d records", tb.Len())
	}
	tt := tb.s().tab.(*tfrTable)
	inf, err := tt.inflated(tb.src(tb.s()), tb.s().size, tb.lifetime().Done())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tail := make([]byte, 4096)
	before := inf.Decompressed()
	if _, err := tb.ReadAtContext(ctx, 1, tail, size-4096); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with its context done: %v, want context.Canceled", err)
	}
	if _, err := tb.ReadAtGenerationContext(ctx, tb.Generation(), 1, tail, size-8192); !errors.Is(err, context.Canceled) {
		t.Fatalf("read at the generation with its context done: %v, want context.Canceled", err)
	}
	if n := inf.Decompressed() - before; n > 2*32<<10 {
		t.Fatalf("two given-up reads decompressed %d bytes, want at most a chunk each", n)
	}
	if _, err := tb.ReadAtContext(context.Background(), 1, tail, size-4096); err != nil || !bytes.Equal(tail, make([]byte, 4096)) {
		t.Fatalf("read after them: %v", err)
	}
	if tb.Info().Loaded != "built" {
		t.Fatalf("%s table: a given-up read must not count as a lie", tb.Info().Loaded)
	}
}

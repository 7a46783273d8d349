package recordio

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestRecordIOReaderConcurrent reads items of plain and zstd files from
// many goroutines at random offsets (run with -race).
func TestRecordIOReaderConcurrent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(21))
	for _, xf := range [][]string{nil, {"zstd"}} {
		items := codectest.GenItems(rng, 30, maxChunkPayload)
		data := makeRio(t, items, WriterOptions{Transformers: xf, MaxItems: 3}, nil)
		s, locs, _ := readAllItems(t, data, Options{Strict: true})
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, s.Transformers(), Options{}, 2)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				r := rand.New(rand.NewSource(seed))
				for k := 0; k < 200; k++ {
					i := r.Intn(len(items))
					off := int64(0)
					if len(items[i]) > 0 {
						off = int64(r.Intn(len(items[i])))
					}
					buf := make([]byte, r.Intn(40000))
					n, err := rd.ReadItem(locs[i], buf, off)
					want := items[i][off:]
					if len(want) > len(buf) {
						want = want[:len(buf)]
					}
					if !bytes.Equal(buf[:n], want) || (err != nil && !errors.Is(err, io.EOF)) ||
						(errors.Is(err, io.EOF) != (n < len(buf))) {
						errs <- errors.New("concurrent read mismatch")
						return
					}
				}
			}(int64(g))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
}

// TestRecordIOReadItemCorrupt: a damaged chunk under an item is reported
// with its offset, and other items of untransformed blocks stay readable.
func TestRecordIOReadItemCorrupt(t *testing.T) {
	t.Parallel()
	item := bytes.Repeat([]byte("z"), 3*maxChunkPayload)
	data := makeRio(t, [][]byte{item}, WriterOptions{}, nil)
	loc := ItemLoc{Block: chunkSize, Off: 4, Len: int64(len(item))}
	data[2*chunkSize+100] ^= 1 // second chunk of the block
	rd, _ := NewReader(bytes.NewReader(data), int64(len(data)), codec.RecordIO, nil, Options{}, 2)
	buf := make([]byte, 10)
	if _, err := rd.ReadItem(loc, buf, 0); err != nil {
		t.Fatalf("first chunk: %v", err)
	}
	var ce *codec.CorruptError
	if _, err := rd.ReadItem(loc, buf, maxChunkPayload+10); !errors.As(err, &ce) || ce.Off != 2*chunkSize {
		t.Fatalf("damaged chunk: %v", err)
	}
	if n, err := rd.ReadItem(loc, buf, int64(len(item))-5); n != 5 || err != io.EOF {
		t.Fatalf("tail: %d %v", n, err)
	}
}

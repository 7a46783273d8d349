package report

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
)

// lenDecoder renders a record as its number, length and first bytes; a
// record starting with "bad" is a misfit.
type lenDecoder struct{}

func (lenDecoder) Decode(w *decode.Writer, rec *decode.Record) error {
	w.B = fmt.Appendf(w.B, "%d %d %.8s\n", rec.N, len(rec.Payload), rec.Payload)
	if bytes.HasPrefix(rec.Payload, []byte("bad")) {
		return decode.Misfit(0, "bad record")
	}
	return nil
}

// TestWriteDecodedReadsOnce: cat --decode of every record of a log reads
// the source in a few large reads, not one per record, and writes what
// rendering each record alone writes, up to a record that fails to
// decode (its error, as before).
func TestWriteDecodedReadsOnce(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	lw := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	var recs [][]byte
	for i := range 5000 {
		r := fmt.Appendf(nil, "record %d %s", i, strings.Repeat("x", i%700))
		if i == 4000 {
			r = []byte("bad record")
		}
		recs = append(recs, r)
		if _, err := lw.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	src := codectest.Counting(log.Bytes())
	ctx := context.Background()
	tb, err := index.Build(ctx, src, int64(log.Len()), index.Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	s := decode.NewSession(lenDecoder{}, decode.SessionOptions{Name: "len"})
	var want []byte
	var wantErr error
	for n := range tb.Len() {
		want, wantErr = s.Render(want, tb, 0, n)
		if wantErr != nil {
			break
		}
		want = append(want, '\n')
	}
	for _, all := range []bool{true, false} {
		src.Reads.Store(0)
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		err := Mode{Sep: "\n"}.WriteDecoded(ctx, w, s, tb, "x.log", []Range{{Lo: 0, Hi: tb.Len()}}, all)
		if err == nil || !strings.Contains(err.Error(), wantErr.Error()) {
			t.Fatalf("all %v: error %v, want %v", all, err, wantErr)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("all %v: %d bytes of output differ from %d rendered one by one", all, out.Len(), len(want))
		}
		if r := src.Reads.Load(); r > int64(log.Len())/(512<<10)+2 {
			t.Errorf("all %v: %d reads of a %d-byte log for %d records", all, r, log.Len(), len(recs))
		}
	}
	// A few records are read alone: no megabyte for each.
	src.Reads.Store(0)
	w := bufio.NewWriter(new(bytes.Buffer))
	if err := (Mode{Sep: "\n"}).WriteDecoded(ctx, w, s, tb, "x.log", []Range{{Lo: 10, Hi: 12}}, false); err != nil {
		t.Fatal(err)
	}
	if r := src.Reads.Load(); r != 2 {
		t.Errorf("2 records took %d reads, want 2", r)
	}
	// Many records far apart are read alone too: not a megabyte per run.
	var sparse []Range
	var size int64
	for n := int64(0); n < 3900; n += 39 {
		sparse = append(sparse, Range{Lo: n, Hi: n + 1})
		size += tb.Size(n)
	}
	src.Bytes.Store(0)
	if err := (Mode{Sep: "\n"}).WriteDecoded(ctx, w, s, tb, "x.log", sparse, false); err != nil {
		t.Fatal(err)
	}
	if b := src.Bytes.Load(); b > 2*size+int64(len(sparse))*64 {
		t.Errorf("%d records far apart (%d bytes) took %d bytes of reads", len(sparse), size, b)
	}
}

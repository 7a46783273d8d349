package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
)

// logTable returns a table of a leveldb log of the records recs.
func logTable(t testing.TB, recs [][]byte) *index.Table {
	t.Helper()
	var log bytes.Buffer
	lw := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for _, r := range recs {
		if _, err := lw.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	tb, err := index.Build(context.Background(), bytes.NewReader(log.Bytes()), int64(log.Len()), index.Options{Format: codec.LevelDB, CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// oneByOne is what WriteDecoded writes of the records rs of tb, rendered
// one at a time in order: the reference of the parallel rendering.
func oneByOne(s *decode.Session, tb *index.Table, m Mode, rs []Range) ([]byte, error) {
	r := renderer{m: m, s: s, t: tb, path: "x.log"}
	var out []byte
	for _, rg := range rs {
		for n := rg.Lo; n < rg.Hi; n++ {
			var err error
			if out, err = r.record(out, n); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// failWriter fails every write after the first ok bytes.
type failWriter struct{ ok int }

var errWrite = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.ok {
		n := w.ok
		w.ok = 0
		return n, errWrite
	}
	w.ok -= len(p)
	return len(p), nil
}

// TestWriteDecodedParallel: rendered on several goroutines, the output is
// the bytes of the records rendered one by one (labels, separators, a
// failing record's partial text and its error included), for every
// number of workers and selection; a failing writer's error comes back.
func TestWriteDecodedParallel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	var recs [][]byte
	for i := range 20000 {
		r := fmt.Appendf(nil, "record %d ", i)
		r = append(r, bytes.Repeat([]byte{'a' + byte(i%26)}, rng.Intn(300))...)
		if i == 15000 {
			r = []byte("bad record")
		}
		recs = append(recs, r)
	}
	tb := logTable(t, recs)
	s := decode.NewSession(lenDecoder{}, decode.SessionOptions{Name: "len"})
	modes := []Mode{{Sep: "\n"}, {Label: "x.log", Number: true}, {Label: "x.log", JSON: true, Sep: "\n"}}
	sels := [][]Range{{{Lo: 0, Hi: tb.Len()}}, {{Lo: 0, Hi: 3000}, {Lo: 5000, Hi: 9000}, {Lo: 100, Hi: 101}}, {{Lo: 14000, Hi: 16000}}}
	for _, m := range modes {
		for _, rs := range sels {
			want, wantErr := oneByOne(s, tb, m, rs)
			for _, workers := range []int{1, 2, 3, 8} {
				var out bytes.Buffer
				w := bufio.NewWriter(&out)
				r := renderer{m: m, s: s, t: tb, path: "x.log"}
				err := r.writePar(context.Background(), w, rs, workers)
				w.Flush()
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%+v %v, %d workers: error %v, want %v", m, rs, workers, err, wantErr)
				}
				if !bytes.Equal(out.Bytes(), want) {
					t.Errorf("%+v %v, %d workers: %d bytes of output differ from the %d rendered one by one", m, rs, workers, out.Len(), len(want))
				}
			}
		}
	}
	rs := []Range{{Lo: 0, Hi: 10000}}
	for _, ok := range []int{0, 5000, 100000} {
		r := renderer{m: Mode{Sep: "\n"}, s: s, t: tb, path: "x.log"}
		if err := r.writePar(context.Background(), bufio.NewWriterSize(&failWriter{ok: ok}, 4096), rs, 2); !errors.Is(err, errWrite) {
			t.Errorf("writer failing after %d bytes: error %v, want %v", ok, err, errWrite)
		}
	}
}

// TestWriteDecodedParallelCancel: a cancelled pass ends with the context's
// error after whole records.
func TestWriteDecodedParallelCancel(t *testing.T) {
	t.Parallel()
	recs := make([][]byte, 30000)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "record %d", i)
	}
	tb := logTable(t, recs)
	ctx, cancel := context.WithCancel(context.Background())
	var seen atomic.Int64
	dec := decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		if seen.Add(1) == 5000 {
			cancel()
		}
		w.B = append(append(w.B, rec.Payload...), '\n')
		return nil
	})
	s := decode.NewSession(dec, decode.SessionOptions{Name: "f"})
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	err := Mode{}.WriteDecoded(ctx, w, s, tb, "x.log", []Range{{Lo: 0, Hi: tb.Len()}}, true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
	lines := bytes.Split(out.Bytes(), []byte("\n"))
	if len(lines) >= len(recs) {
		t.Fatalf("%d lines written after the cancel", len(lines))
	}
	for i, l := range lines[:len(lines)-1] {
		if want := fmt.Sprintf("record %d", i); string(l) != want {
			t.Fatalf("line %d is %q, want %q", i, l, want)
		}
	}
}

// TestWriteDecodedRendersAtOnce: a whole file's records are rendered on
// two goroutines at once (record 0's rendering waits until a record of a
// later chunk is being rendered: one goroutine alone would wait for
// ever); a decoder that learns is fed its records one at a time, in order.
func TestWriteDecodedRendersAtOnce(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one P: WriteDecoded renders on one goroutine")
	}
	t.Parallel()
	recs := make([][]byte, 20000)
	for i := range recs {
		recs[i] = binary.LittleEndian.AppendUint64(bytes.Repeat([]byte{'v'}, 100), uint64(i))
	}
	tb := logTable(t, recs)
	all := []Range{{Lo: 0, Hi: tb.Len()}}
	var first Range
	(&renderer{t: tb}).chunks(all, func(c *chunk) bool { first = c.rs[0]; return false })
	later := make(chan struct{})
	var once atomic.Bool
	dec := decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		switch {
		case rec.N == 0:
			select {
			case <-later:
			case <-time.After(20 * time.Second):
				return errors.New("no record of a later chunk was rendered while record 0 was")
			}
		case rec.N >= first.Hi && once.CompareAndSwap(false, true):
			close(later)
		}
		w.B = append(w.B, "ok\n"...)
		return nil
	})
	s := decode.NewSession(dec, decode.SessionOptions{Name: "f"})
	if err := (Mode{}).WriteDecoded(context.Background(), bufio.NewWriter(new(bytes.Buffer)), s, tb, "x.log", all, true); err != nil {
		t.Fatal(err)
	}
	l := &orderLearner{}
	s = decode.NewSession(l, decode.SessionOptions{Name: "l"})
	if err := (Mode{}).WriteDecoded(context.Background(), bufio.NewWriter(new(bytes.Buffer)), s, tb, "x.log", all, true); err != nil {
		t.Fatal(err)
	}
	if l.next != tb.Len() {
		t.Errorf("learned %d records of %d", l.next, tb.Len())
	}
}

// orderLearner fails a record rendered out of order.
type orderLearner struct{ next, rendered int64 }

func (l *orderLearner) Decode(w *decode.Writer, rec *decode.Record) error {
	if rec.N != l.rendered {
		return fmt.Errorf("record %d rendered after %d", rec.N, l.rendered-1)
	}
	l.rendered++
	return nil
}

func (l *orderLearner) Learn(rec *decode.Record) error {
	if rec.N != l.next {
		return fmt.Errorf("learned %d, want %d", rec.N, l.next)
	}
	l.next++
	return nil
}

func (l *orderLearner) Reset() { l.next = 0 }

// BenchmarkWriteDecoded: cat --decode batch of a WAL's every record, from
// a built table to the writer: on one goroutine (-cpu 1) or on several.
func BenchmarkWriteDecoded(b *testing.B) {
	rng := rand.New(rand.NewSource(2))
	var recs [][]byte
	var size int64
	val := make([]byte, 100)
	for i := range 20000 {
		ops := 1 + i%4
		r := binary.LittleEndian.AppendUint64(nil, uint64(i*4))
		r = binary.LittleEndian.AppendUint32(r, uint32(ops))
		for range ops {
			for j := range val {
				val[j] = 'a' + byte(rng.Intn(26))
			}
			r = append(r, 1, 16)
			r = fmt.Appendf(r, "user%012d", rng.Intn(1_000_000))
			r = append(append(r, byte(len(val))), val...)
		}
		recs = append(recs, r)
		size += int64(len(r))
	}
	tb := logTable(b, recs)
	s := decode.NewSession(dbdecode.NewBatch(dbdecode.Options{}, nil), decode.SessionOptions{Name: "batch"})
	w := bufio.NewWriterSize(discard{}, CopyBufSize)
	all := []Range{{Lo: 0, Hi: tb.Len()}}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := (Mode{}).WriteDecoded(context.Background(), w, s, tb, "x.log", all, true); err != nil {
			b.Fatal(err)
		}
	}
}

// discard is io.Discard without its ReadFrom.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
)

// counter is a decoder that learns: each record renders with the count of
// the records before it, and the summary says how many there were.
type counter struct{ n int }

func (c *counter) Decode(w *decode.Writer, rec *decode.Record) error {
	w.Begin()
	w.B = fmt.Appendf(w.B, "after %d: %d bytes", c.n, len(rec.Payload))
	w.End()
	return nil
}
func (c *counter) Learn(*decode.Record) error { c.n++; return nil }
func (c *counter) Reset()                     { c.n = 0 }
func (c *counter) Summary(w *decode.Writer) error {
	w.Begin()
	w.B = fmt.Appendf(w.B, "%d records", c.n)
	w.End()
	return nil
}

// passLog is a leveldb log of n records of 20 to 2,019 bytes, with a
// record of 100,000 bytes at 700 and, when bad >= 0, a misfit for
// lenDecoder at bad.
func passLog(t *testing.T, n, bad int) []byte {
	var log bytes.Buffer
	lw := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for i := range n {
		r := fmt.Appendf(nil, "record %d %s", i, strings.Repeat("x", 10+i*37%2000))
		switch i {
		case bad:
			r = []byte("bad record")
		case 700:
			r = bytes.Repeat([]byte("long"), 25000)
		}
		if _, err := lw.WriteRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	return log.Bytes()
}

// renderTable is what cat writes through a table: WriteDecoded of every
// record of data.
func renderTable(t *testing.T, data []byte, m Mode, s *decode.Session) (string, []codec.Damage, error) {
	tb, err := index.Build(context.Background(), bytes.NewReader(data), int64(len(data)), index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	err = m.WriteDecoded(context.Background(), w, s, tb, "x.log", []Range{{Lo: 0, Hi: tb.Len()}}, true)
	return out.String(), tb.Damage(), err
}

// renderWithPass is WritePass of the size bytes of src, with the pass it made.
func renderWithPass(t *testing.T, ctx context.Context, src io.ReaderAt, size int64, m Mode, s *decode.Session) (string, *index.Pass, error) {
	p, err := index.NewPass(ctx, src, size, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := bufio.NewWriter(&out)
	err = m.WritePass(ctx, w, s, p, "x.log")
	return out.String(), p, err
}

// TestWritePass: a pass writes the bytes WriteDecoded writes through a
// table (labels, separators, JSON, a learner's state and summary, a
// misfit record's partial text and error, a record too large), reading
// the file once; after a failed record it still finds all the damage.
func TestWritePass(t *testing.T) {
	t.Parallel()
	clean := passLog(t, 3000, -1)
	misfit := passLog(t, 3000, 2500)
	damaged := bytes.Clone(misfit)
	damaged[100000] ^= 0x40
	damaged[len(damaged)-5000] ^= 0x40 // after the misfit: found by the rest of the pass
	stateless := func(o decode.Output, max int64) *decode.Session {
		return decode.NewSession(lenDecoder{}, decode.SessionOptions{Name: "len", Output: o, MaxRecord: max})
	}
	learning := func(o decode.Output, max int64) *decode.Session {
		return decode.NewSession(&counter{}, decode.SessionOptions{Name: "count", Output: o, MaxRecord: max})
	}
	modes := []struct {
		m Mode
		o decode.Output
	}{
		{Mode{}, decode.Output{}},
		{Mode{Sep: "--\n"}, decode.Output{}},
		{Mode{JSON: true, Label: "x.log"}, decode.Output{JSON: true}},
		{Mode{Number: true, Label: "x.log"}, decode.Output{Number: true, Width: 6}},
	}
	for _, data := range []struct {
		name string
		b    []byte
	}{{"clean", clean}, {"misfit", misfit}, {"damaged", damaged}} {
		for _, dec := range []struct {
			name string
			new  func(decode.Output, int64) *decode.Session
		}{{"stateless", stateless}, {"learner", learning}} {
			for mi, md := range modes {
				for _, max := range []int64{0, 50000} {
					name := fmt.Sprintf("%s/%s/mode %d/max %d", data.name, dec.name, mi, max)
					want, wantDamage, wantErr := renderTable(t, data.b, md.m, dec.new(md.o, max))
					src := codectest.Counting(data.b)
					got, p, err := renderWithPass(t, context.Background(), src, int64(len(data.b)), md.m, dec.new(md.o, max))
					if fmt.Sprint(err) != fmt.Sprint(wantErr) {
						t.Fatalf("%s: error %v, want %v", name, err, wantErr)
					}
					if got != want {
						t.Fatalf("%s: %d bytes of output unlike the table's %d", name, len(got), len(want))
					}
					if !p.Done() || fmt.Sprint(p.Damage()) != fmt.Sprint(wantDamage) {
						t.Fatalf("%s: done %v, damage %v, want %v", name, p.Done(), p.Damage(), wantDamage)
					}
					if src.Bytes.Load() > int64(len(data.b))*11/10+64<<10 {
						t.Fatalf("%s: read %d bytes of a %d-byte file", name, src.Bytes.Load(), len(data.b))
					}
				}
			}
		}
	}
}

// TestWritePassStops: a source that fails midway ends the output after
// whole records with the read's error, the pass not done; a context done
// stops it with the context's error; a writer that fails stops it at once.
func TestWritePassStops(t *testing.T) {
	t.Parallel()
	data := passLog(t, 3000, -1)
	s := decode.NewSession(lenDecoder{}, decode.SessionOptions{Name: "len"})
	full, _, _ := renderTable(t, data, Mode{}, s)

	src := codectest.Counting(data)
	src.FailAt = int64(len(data)) / 2
	got, p, err := renderWithPass(t, context.Background(), src, int64(len(data)), Mode{}, s)
	if !errors.Is(err, codectest.ErrInjected) || !strings.HasPrefix(err.Error(), "x.log: ") || p.Done() {
		t.Fatalf("failing source: %v, done %v", err, p.Done())
	}
	if got == "" || !strings.HasPrefix(full, got) || !strings.HasSuffix(got, "\n") || len(got) >= len(full) {
		t.Fatalf("failing source: %d bytes written, not a part of the %d in whole records", len(got), len(full))
	}

	ctx, cancel := context.WithCancel(context.Background())
	p, err = index.NewPass(ctx, bytes.NewReader(data), int64(len(data)), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	var out bytes.Buffer
	if err := (Mode{}).WritePass(ctx, bufio.NewWriter(&out), s, p, "x.log"); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Fatalf("canceled: %v, %d bytes", err, out.Len())
	}

	src = codectest.Counting(data)
	p, err = index.NewPass(context.Background(), src, int64(len(data)), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(failWriter{}, 4096)
	if err := (Mode{}).WritePass(context.Background(), w, s, p, "x.log"); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("failing writer: %v", err)
	}
	if src.Bytes.Load() > 1<<20 || len(data) < 2<<20 {
		t.Fatalf("failing writer: the pass went on reading (%d bytes)", src.Bytes.Load())
	}
}

// failWriter fails every write, as a closed pipe.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestWritePassAllocs: rendering WriteBatches allocates nothing per
// record: a pass over 20,000 records allocates as much as one over 2,000.
func TestWritePassAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers: allocations are not counted under it")
	}
	allocs := func(n int, o decode.Output) float64 {
		var log bytes.Buffer
		lw := leveldb.NewWriter(&log, leveldb.WriterOptions{})
		for i := range n {
			b := binary.LittleEndian.AppendUint64(nil, uint64(i+1))
			b = binary.LittleEndian.AppendUint32(b, 2)
			for j := range 2 {
				k, v := fmt.Sprintf("key%d.%d", i, j), strings.Repeat("hello world ", i%30)
				b = append(b, 1)
				b = binary.AppendUvarint(b, uint64(len(k)))
				b = append(b, k...)
				b = binary.AppendUvarint(b, uint64(len(v)))
				b = append(b, v...)
			}
			if _, err := lw.WriteRecord(b); err != nil {
				t.Fatal(err)
			}
		}
		lw.Close()
		data := log.Bytes()
		s := decode.NewSession(dbdecode.NewBatch(dbdecode.Options{}, nil), decode.SessionOptions{Name: "batch", Output: o})
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		return testing.AllocsPerRun(5, func() {
			p, err := index.NewPass(context.Background(), bytes.NewReader(data), int64(len(data)), index.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := (Mode{}).WritePass(context.Background(), w, s, p, "x.log"); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, o := range []decode.Output{{}, {JSON: true}, {Number: true}} {
		small, large := allocs(2000, o), allocs(20000, o)
		t.Logf("%+v: allocations: %v for 2,000 records, %v for 20,000", o, small, large)
		if large > small+50 {
			t.Errorf("%+v: a pass over 20,000 records made %v allocations, over 2,000 %v", o, large, small)
		}
	}
}

package recordio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
)

// TestRecordIOWriterMatchesVectors drives the writer the way each
// uncompressed v2 vector's manifest says the reference writer was driven,
// with the vector's items (checked against the manifest hashes by
// TestRecordIOVectors), and requires byte-identical output.
func TestRecordIOWriterMatchesVectors(t *testing.T) {
	t.Parallel()
	n := 0
	for name, v := range loadVectors(t) {
		m := v.m
		if m.Writer.API != "recordio.NewWriter" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s, _, items := readAllItems(t, v.data, Options{Strict: true})
			var hdr []HeaderEntry
			for _, e := range m.Writer.AddHeader {
				hdr = append(hdr, HeaderEntry{Key: e.Key, Value: manifestValue(t, e.Type, e.Value)})
			}
			var out bytes.Buffer
			w, err := NewWriter(&out, WriterOptions{
				Header: hdr, Transformers: m.Writer.Transformers, Trailer: m.Writer.KeyTrailerOpt, MaxItems: m.Writer.MaxItems,
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, it := range items {
				if _, err := w.Append(it); err != nil {
					t.Fatal(err)
				}
				if slices.Contains(m.Writer.FlushAfterItems, i) {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if m.Writer.SetTrailer {
				loc, ok, err := s.Trailer()
				if !ok || err != nil {
					t.Fatalf("trailer: %v %v", ok, err)
				}
				rd, _ := NewReader(bytes.NewReader(v.data), int64(len(v.data)), codec.RecordIO, nil, Options{}, 1)
				tb := make([]byte, loc.Len)
				if _, err := rd.ReadItem(loc, tb, 0); err != nil && loc.Len > 0 {
					t.Fatal(err)
				}
				if err := w.SetTrailer(tb); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if len(m.Writer.Transformers) > 0 {
				// Compressed bytes depend on the compressor version: compare content.
				_, _, got := readAllItems(t, out.Bytes(), Options{Strict: true})
				if len(got) != len(items) {
					t.Fatalf("round trip: %d items, want %d", len(got), len(items))
				}
				for i := range got {
					if !bytes.Equal(got[i], items[i]) {
						t.Fatalf("round trip item %d differs", i)
					}
				}
				return
			}
			n++
			if !bytes.Equal(out.Bytes(), v.data) {
				at := 0
				for at < min(out.Len(), len(v.data)) && out.Bytes()[at] == v.data[at] {
					at++
				}
				t.Fatalf("writer output (%d bytes) differs from the reference file (%d bytes) at byte %d", out.Len(), len(v.data), at)
			}
		})
	}
	if n < 6 {
		t.Errorf("only %d vectors compared byte for byte", n)
	}
}

func TestRecordIOWriterRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	hdr := []HeaderEntry{{"s", "x"}, {"b", true}, {"i", int64(-5)}, {"u", uint64(1 << 40)}, {"s", "dup"}, {"empty", ""}}
	bigTrailer := make([]byte, 3*maxChunkPayload+7)
	rng.Read(bigTrailer)
	cases := []struct {
		name     string
		xf       []string
		maxItems int
		maxBytes int64
		n        int
		trailer  []byte
		flushAt  int
	}{
		{name: "plain", n: 40},
		{name: "plain-small-blocks", maxItems: 2, n: 30, trailer: []byte{}},
		{name: "plain-maxbytes", maxBytes: 50000, n: 30, trailer: bigTrailer},
		{name: "flate", xf: []string{"flate"}, maxItems: 4, n: 20, trailer: []byte("idx")},
		{name: "flate0", xf: []string{"flate 0"}, maxItems: 4, n: 12},
		{name: "zstd", xf: []string{"zstd"}, maxItems: 3, n: 20, trailer: bigTrailer},
		{name: "zstd3", xf: []string{"zstd 3"}, n: 10, flushAt: 4},
		{name: "chain", xf: []string{"flate 1", "zstd 3"}, maxItems: 5, n: 20, trailer: []byte{}},
		{name: "empty", n: 0},
		{name: "empty-trailer-only", n: 0, trailer: []byte("t")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := codectest.GenItems(rng, c.n, maxChunkPayload)
			var out bytes.Buffer
			w, err := NewWriter(&out, WriterOptions{Header: hdr, Transformers: c.xf, Trailer: c.trailer != nil,
				MaxItems: c.maxItems, MaxBlockBytes: c.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			var appended []ItemLoc
			for i, it := range items {
				loc, err := w.Append(it)
				if err != nil {
					t.Fatal(err)
				}
				appended = append(appended, loc)
				if c.flushAt > 0 && i == c.flushAt {
					w.Flush()
				}
			}
			if c.trailer != nil {
				if err := w.SetTrailer(c.trailer); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if out.Len()%chunkSize != 0 || int64(out.Len()) != w.Offset() {
				t.Fatalf("file size %d (offset %d) not a chunk multiple", out.Len(), w.Offset())
			}
			s, locs, got := readAllItems(t, out.Bytes(), Options{Strict: true})
			if len(got) != len(items) {
				t.Fatalf("%d items, want %d", len(got), len(items))
			}
			for i := range got {
				if !bytes.Equal(got[i], items[i]) {
					t.Fatalf("item %d differs", i)
				}
				if locs[i].Block != appended[i].Block || locs[i].Item != appended[i].Item {
					t.Fatalf("item %d at %+v, Append said %+v", i, locs[i], appended[i])
				}
			}
			wantHdr := []HeaderEntry{}
			for _, x := range c.xf {
				wantHdr = append(wantHdr, HeaderEntry{HeaderKeyTransformer, x})
			}
			if c.trailer != nil {
				wantHdr = append(wantHdr, HeaderEntry{HeaderKeyTrailer, true})
			}
			wantHdr = append(wantHdr, hdr...)
			if !slices.Equal(s.Header(), wantHdr) {
				t.Fatalf("header %v, want %v", s.Header(), wantHdr)
			}
			if !slices.Equal(s.Transformers(), c.xf) && !(len(c.xf) == 0 && len(s.Transformers()) == 0) {
				t.Fatalf("transformers %v, want %v", s.Transformers(), c.xf)
			}
			loc, ok, err := s.Trailer()
			if err != nil || ok != (c.trailer != nil) {
				t.Fatalf("trailer ok=%v err=%v", ok, err)
			}
			if ok {
				rd, _ := NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()), codec.RecordIO, c.xf, Options{}, 2)
				tb := make([]byte, loc.Len+1)
				n, _ := rd.ReadItem(loc, tb, 0)
				if !bytes.Equal(tb[:n], c.trailer) {
					t.Fatalf("trailer %d bytes, want %d", n, len(c.trailer))
				}
			}
		})
	}
}

func TestRecordIOWriterErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    WriterOptions
	}{
		{"unknown transformer", WriterOptions{Transformers: []string{"lz4"}}},
		{"bad flate level", WriterOptions{Transformers: []string{"flate 10"}}},
		{"bad zstd level", WriterOptions{Transformers: []string{"zstd x"}}},
		{"float header", WriterOptions{Header: []HeaderEntry{{"f", 1.5}}}},
	}
	for _, c := range cases {
		if _, err := NewWriter(io.Discard, c.o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := NewWriter(io.Discard, WriterOptions{Transformers: []string{"lz4"}}); !errors.Is(err, codec.ErrUnsupported) {
		t.Errorf("unknown transformer: %v, want ErrUnsupported", err)
	}
	w, _ := NewWriter(io.Discard, WriterOptions{})
	if err := w.SetTrailer(nil); err == nil {
		t.Error("SetTrailer without Trailer option succeeded")
	}
	w, _ = NewWriter(io.Discard, WriterOptions{Trailer: true})
	w.SetTrailer([]byte("x"))
	if _, err := w.Append([]byte("late")); err == nil {
		t.Error("Append after SetTrailer succeeded")
	}
	// A failing underlying writer poisons the writer.
	fw := &failingWriter{left: 100}
	w, _ = NewWriter(fw, WriterOptions{})
	if _, err := w.Append([]byte("x")); err == nil {
		t.Error("Append with failing writer succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after failure succeeded")
	}
}

// failingWriter accepts left bytes, then fails.
type failingWriter struct{ left int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, fmt.Errorf("simulated write failure")
	}
	f.left -= len(p)
	return len(p), nil
}

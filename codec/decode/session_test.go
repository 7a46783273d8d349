package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// memRecords is a Records over byte slices, counting reads of bytes (not
// the reads of nothing that prove a record, see ReadRecord).
type memRecords struct {
	recs  [][]byte
	mu    sync.Mutex
	reads map[int64]int
}

func (m *memRecords) Len() int64         { return int64(len(m.recs)) }
func (m *memRecords) Size(n int64) int64 { return int64(len(m.recs[n])) }
func (m *memRecords) ReadAt(n int64, p []byte, off int64) (int, error) {
	m.mu.Lock()
	if m.reads == nil {
		m.reads = map[int64]int{}
	}
	if len(p) > 0 {
		m.reads[n]++
	}
	m.mu.Unlock()
	return bytes.NewReader(m.recs[n]).ReadAt(p, off)
}

// metaRecords adds RecordMeta to memRecords.
type metaRecords struct{ *memRecords }

func (m metaRecords) RecordMeta(n int64, md *Meta) error {
	md.Seq, md.HasSeq = 100+n, true
	md.Key, md.HasKey = []byte(fmt.Sprint("k", n)), true
	return nil
}

// defs is a test Learner: a record "def NAME" defines NAME as learned at
// that record; "use NAME" renders whether NAME was defined before it.
type defs struct {
	mu      sync.Mutex
	at      map[string]int64
	learned []int64
	resets  int
}

func (d *defs) Decode(w *Writer, rec *Record) error {
	verb, name, _ := strings.Cut(string(rec.Payload), " ")
	switch verb {
	case "def":
	case "use":
		d.mu.Lock()
		at, ok := d.at[name]
		d.mu.Unlock()
		known := ok && at < rec.N // only what records before this one taught
		w.Begin()
		if w.JSON() {
			w.Key("known")
			w.B = fmt.Appendf(w.B, "%t", known)
		} else {
			w.B = fmt.Appendf(w.B, "%s known=%t", name, known)
		}
		w.End()
	default:
		return Misfit(0, "verb %q", verb)
	}
	return nil
}

func (d *defs) Learn(rec *Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.learned = append(d.learned, rec.N)
	if verb, name, _ := strings.Cut(string(rec.Payload), " "); verb == "def" {
		if _, ok := d.at[name]; !ok {
			d.at[name] = rec.N
		}
	}
	return nil
}

func (d *defs) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.at, d.learned = map[string]int64{}, nil
	d.resets++
}

func (d *defs) Summary(w *Writer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	w.Begin()
	w.B = fmt.Appendf(w.B, "%d names", len(d.at))
	w.End()
	return nil
}

// TestSessionLearnsInOrder: whatever order records are rendered in, every
// record before the one rendered is learned first, each once and in
// order, and a record renders the same as when read in order.
func TestSessionLearnsInOrder(t *testing.T) {
	recs := &memRecords{recs: [][]byte{[]byte("use a"), []byte("def a"), []byte("use a"), []byte("def b"), []byte("use b"), []byte("use a")}}
	want := []string{"a known=false\n", "", "a known=true\n", "", "b known=true\n", "a known=true\n"}
	for _, order := range [][]int64{{0, 1, 2, 3, 4, 5}, {5, 0, 4, 2}, {4, 4, 1}} {
		d := &defs{at: map[string]int64{}}
		s := NewSession(d, SessionOptions{Name: "defs"})
		recs.reads = nil
		for _, n := range order {
			got, err := s.Render(nil, recs, 0, n)
			if err != nil || string(got) != want[n] {
				t.Fatalf("order %v: record %d: %q, %v; want %q", order, n, got, err, want[n])
			}
		}
		for i, n := range d.learned {
			if n != int64(i) {
				t.Fatalf("order %v: learned %v, want 0, 1, 2, ... in order", order, d.learned)
			}
		}
		// A record is read once to learn it and once to render it, never
		// more: rendering record k in order learns it from the same read.
		for n, c := range recs.reads {
			if c > 2 {
				t.Errorf("order %v: record %d read %d times", order, n, c)
			}
		}
	}
}

// TestSessionGenerations: a new generation drops what was learned.
func TestSessionGenerations(t *testing.T) {
	recs := &memRecords{recs: [][]byte{[]byte("def a"), []byte("use a")}}
	d := &defs{at: map[string]int64{}}
	s := NewSession(d, SessionOptions{Name: "defs"})
	if got, _ := s.Render(nil, recs, 1, 1); string(got) != "a known=true\n" {
		t.Fatalf("generation 1: %q", got)
	}
	recs.recs[0] = []byte("def z")
	if got, _ := s.Render(nil, recs, 2, 1); string(got) != "a known=false\n" {
		t.Fatalf("generation 2: %q (state of generation 1 kept)", got)
	}
	if d.resets != 2 { // the first use and the change
		t.Errorf("%d resets, want 2", d.resets)
	}
}

// TestSessionSummary: the summary learns every record first.
func TestSessionSummary(t *testing.T) {
	recs := &memRecords{recs: [][]byte{[]byte("def a"), []byte("def b"), []byte("def a")}}
	s := NewSession(&defs{at: map[string]int64{}}, SessionOptions{Name: "defs", Output: Output{Number: true}})
	got, ok, err := s.Summary(nil, recs, 0)
	if !ok || err != nil || string(got) != "summary\t2 names\n" {
		t.Fatalf("summary %q, %v, %v", got, ok, err)
	}
	js := NewSession(&defs{at: map[string]int64{}}, SessionOptions{Name: "defs", Output: Output{JSON: true}})
	if got, _, _ := js.Summary(nil, recs, 0); !strings.HasPrefix(string(got), `{"summary":true`) {
		t.Fatalf("JSON summary %q", got)
	}
	if _, ok, _ := NewSession(Func(func(*Writer, *Record) error { return nil }), SessionOptions{}).Summary(nil, recs, 0); ok {
		t.Fatal("a stateless decoder has a summary")
	}
}

// TestSessionErrors: a misfit names the decoder, the record and the byte;
// a record past MaxRecord is ErrTooLarge; output past MaxOutput is
// ErrLimit and is dropped.
func TestSessionErrors(t *testing.T) {
	recs := &memRecords{recs: [][]byte{[]byte("bad"), bytes.Repeat([]byte("x"), 100), []byte("ok")}}
	dec := Func(func(w *Writer, rec *Record) error {
		switch string(rec.Payload) {
		case "bad":
			w.Begin()
			w.B = append(w.B, "partial"...)
			w.End()
			return Misfit(2, "no %s", "good")
		case "ok":
			w.B = append(w.B, bytes.Repeat([]byte("y"), MaxOutput(2)+1)...)
		}
		return nil
	})
	s := NewSession(dec, SessionOptions{Name: "t", MaxRecord: 50})
	out, err := s.Render([]byte("pre:"), recs, 0, 0)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrMisfit) || e.N != 0 || e.At != 2 || err.Error() != "decode t: record 0 at byte 2: no good" {
		t.Fatalf("misfit: %v", err)
	}
	if string(out) != "pre:partial\n" {
		t.Fatalf("text before the fault: %q", out)
	}
	if _, err := s.Render(nil, recs, 0, 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("large record: %v", err)
	}
	if out, err := s.Render([]byte("pre:"), recs, 0, 2); !errors.Is(err, ErrLimit) || string(out) != "pre:" {
		t.Fatalf("huge output: %d bytes, %v", len(out), err)
	}
}

// TestWriterLabels: Begin and BeginSeq in the three output modes, with
// the metadata a format keeps.
func TestWriterLabels(t *testing.T) {
	recs := metaRecords{&memRecords{recs: [][]byte{[]byte("v0"), []byte("v1")}}}
	dec := Func(func(w *Writer, rec *Record) error {
		w.BeginSeq("offset", uint64(rec.Meta.Seq))
		if w.JSON() {
			w.Key("key")
			w.B = AppendJSONBytes(w.B, rec.Meta.Key)
			w.Key("value")
			w.B = AppendJSONBytes(w.B, rec.Payload)
		} else {
			w.B = fmt.Appendf(w.B, "%s %s", rec.Meta.Key, rec.Payload)
		}
		w.End()
		w.Begin()
		if !w.JSON() {
			w.B = append(w.B, "end"...)
		}
		w.End()
		return nil
	})
	for _, tc := range []struct {
		o    Output
		want string
	}{
		{Output{}, "k1 v1\nend\n"},
		{Output{Number: true, Width: 3}, "001\toffset=101\tk1 v1\n001\tend\n"},
		{Output{JSON: true, Number: true}, `{"n":1,"offset":101,"key":"k1","value":"v1"}` + "\n" + `{"n":1}` + "\n"},
	} {
		got, err := NewSession(dec, SessionOptions{Name: "kv", Output: tc.o}).Render(nil, recs, 0, 1)
		if err != nil || string(got) != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.o, got, err, tc.want)
		}
	}
}

// FuzzAppendJSONBytes: the output is one JSON value that gives back the
// bytes: a string when they are UTF-8, else the marked base64 form.
func FuzzAppendJSONBytes(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\t\x00\x1f\x7f<&>", "\xff\xfe", "é中\u2028"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := AppendJSONBytes(nil, b)
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%q -> %s: %v", b, out, err)
		}
		switch v := v.(type) {
		case string:
			if !utf8.Valid(b) || v != string(b) {
				t.Fatalf("%q -> %s -> %q", b, out, v)
			}
			if bytes.ContainsAny(out, "\n\r") {
				t.Fatalf("%q -> %s breaks a line", b, out)
			}
		case map[string]any:
			raw, err := base64.StdEncoding.DecodeString(v["base64"].(string))
			if utf8.Valid(b) || err != nil || !bytes.Equal(raw, b) || len(v) != 1 {
				t.Fatalf("%q -> %s", b, out)
			}
		default:
			t.Fatalf("%q -> %s", b, out)
		}
	})
}

// TestSessionRenderPayload: rendering a payload the caller read equals
// Render of the record (learning included) and reads nothing of the
// records being rendered; past MaxRecord it is ErrTooLarge.
func TestSessionRenderPayload(t *testing.T) {
	recs := &memRecords{recs: [][]byte{[]byte("use a"), []byte("def a"), []byte("use a"), []byte("def b"), []byte("use b"), []byte("use a")}}
	ref := NewSession(&defs{at: map[string]int64{}}, SessionOptions{Name: "defs"})
	d := &defs{at: map[string]int64{}}
	s := NewSession(d, SessionOptions{Name: "defs", MaxRecord: 5})
	for n, raw := range recs.recs {
		want, werr := ref.Render(nil, recs, 0, int64(n))
		recs.reads = nil
		got, err := s.RenderPayload(nil, recs, 0, int64(n), raw)
		if string(got) != string(want) || (err == nil) != (werr == nil) {
			t.Fatalf("record %d: %q, %v; Render: %q, %v", n, got, err, want, werr)
		}
		if len(recs.reads) > 0 {
			t.Fatalf("record %d: rendering in order read records %v", n, recs.reads)
		}
	}
	if fmt.Sprint(d.learned) != "[0 1 2 3 4 5]" {
		t.Fatalf("learned %v", d.learned)
	}
	if _, err := s.RenderPayload(nil, recs, 0, 0, []byte("toolong")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("large payload: %v", err)
	}
}

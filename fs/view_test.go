package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
)

// upperView renders a record as "<UPPER>\n" and counts renders.
func upperView(calls *atomic.Int64) *decode.Session {
	return upperViewMax(calls, 0)
}

// upperViewMax is upperView rendering records of at most max bytes.
func upperViewMax(calls *atomic.Int64, max int64) *decode.Session {
	return testSession("upper", max, func(dst, rec []byte) []byte {
		calls.Add(1)
		dst = append(dst, '<')
		dst = append(dst, bytes.ToUpper(rec)...)
		return append(dst, ">\n"...)
	})
}

// testSession is a session of a stateless decoder that renders with f.
func testSession(name string, max int64, f func(dst, rec []byte) []byte) *decode.Session {
	return decode.NewSession(decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		w.B = f(w.B, rec.Payload)
		return nil
	}), decode.SessionOptions{Name: name, MaxRecord: max})
}

// TestViewSizesAndReads: through a tree, a viewed record's size is its
// rendering's length, reads return the rendering, and listing sizes then
// reading in pieces renders each record once.
func TestViewSizesAndReads(t *testing.T) {
	var calls atomic.Int64
	src := &fakeRecords{recs: [][]byte{[]byte("abc"), []byte(""), bytes.Repeat([]byte("x"), 1000)}}
	tr, _ := newFileTree(t, View(src, upperView(&calls), ""))
	ctx := context.Background()
	for n, raw := range src.recs {
		want := "<" + string(bytes.ToUpper(raw)) + ">\n"
		node, err := tr.Lookup(ctx, tr.Root(), RecordName(int64(n), src.Len()))
		if err != nil {
			t.Fatal(err)
		}
		a, err := tr.Getattr(ctx, node)
		if err != nil || a.Size != int64(len(want)) {
			t.Fatalf("record %d: size %d, %v; want %d", n, a.Size, err, len(want))
		}
		h, err := tr.Open(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 7)
		for off := int64(0); ; {
			k, err := h.ReadAt(buf, off)
			got = append(got, buf[:k]...)
			off += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		h.Close()
		if string(got) != want {
			t.Fatalf("record %d: read %q, want %q", n, got, want)
		}
	}
	if c := calls.Load(); c != int64(len(src.recs)) {
		t.Errorf("%d renders for %d records", c, len(src.recs))
	}
}

// TestViewTooLarge: a record above MaxRecord fails to size and to read
// with ErrTooLarge (EFBIG), and Getattr says so instead of a wrong size.
func TestViewTooLarge(t *testing.T) {
	var calls atomic.Int64
	v := upperViewMax(&calls, 10)
	src := &fakeRecords{recs: [][]byte{[]byte("small"), bytes.Repeat([]byte("y"), 11)}}
	vs := View(src, v, "")
	if _, err := vs.(sizeErrer).SizeErr(context.Background(), 1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("SizeErr: %v, want ErrTooLarge", err)
	}
	if _, err := vs.ReadAt(1, make([]byte, 4), 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAt: %v, want ErrTooLarge", err)
	}
	tr, _ := newFileTree(t, vs)
	node, err := tr.Lookup(context.Background(), tr.Root(), RecordName(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Getattr(context.Background(), node); Errno(err) != syscall.EFBIG {
		t.Fatalf("Getattr: %v (errno %d), want EFBIG", err, Errno(err))
	}
	if size, err := vs.(sizeErrer).SizeErr(context.Background(), 0); err != nil || size != int64(len("<SMALL>\n")) {
		t.Fatalf("small record: %d, %v", size, err)
	}
}

// versionedFake is a fakeRecords with a generation that Rewrite bumps.
type versionedFake struct {
	fakeRecords
	gen atomic.Uint64
}

func (v *versionedFake) Generation() uint64 { return v.gen.Load() }
func (v *versionedFake) ReadAtGeneration(gen uint64, n int64, p []byte, off int64) (int, error) {
	if gen != v.gen.Load() {
		return 0, index.ErrChanged
	}
	return v.ReadAt(n, p, off)
}

// TestViewGenerations: a handle opened before its source changed fails
// (never the cached rendering of the old version), and sizes are those
// of the new version afterwards.
func TestViewGenerations(t *testing.T) {
	var calls atomic.Int64
	src := &versionedFake{fakeRecords: fakeRecords{recs: [][]byte{[]byte("old")}}}
	vs := View(src, upperView(&calls), "").(Versioned)
	g0 := vs.Generation()
	p := make([]byte, 64)
	if k, _ := vs.ReadAtGeneration(g0, 0, p, 0); string(p[:k]) != "<OLD>\n" {
		t.Fatalf("read %q", p[:k])
	}
	src.recs[0] = []byte("newer")
	src.gen.Add(1)
	if _, err := vs.ReadAtGeneration(g0, 0, p, 0); !errors.Is(err, index.ErrChanged) {
		t.Fatalf("read at the old generation: %v, want ErrChanged", err)
	}
	if size, err := vs.(sizeErrer).SizeErr(context.Background(), 0); err != nil || size != int64(len("<NEWER>\n")) {
		t.Fatalf("size after the change: %d, %v", size, err)
	}
	if k, err := vs.ReadAtGeneration(vs.Generation(), 0, p, 0); string(p[:k]) != "<NEWER>\n" || err != io.EOF {
		t.Fatalf("read %q, %v", p[:k], err)
	}
}

// TestViewConcurrent: sizes and reads from many goroutines agree with the
// renderings (run with -race).
func TestViewConcurrent(t *testing.T) {
	var calls atomic.Int64
	src := &fakeRecords{}
	for i := 0; i < 200; i++ {
		src.recs = append(src.recs, bytes.Repeat([]byte{'a' + byte(i%26)}, i))
	}
	vs := View(src, upperView(&calls), "")
	done := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			p := make([]byte, 512)
			for i := 0; i < 400; i++ {
				n := int64((i*7 + g*13) % len(src.recs))
				want := "<" + string(bytes.ToUpper(src.recs[n])) + ">\n"
				size, err := vs.(sizeErrer).SizeErr(context.Background(), n)
				if err != nil || size != int64(len(want)) {
					done <- errors.New("size mismatch")
					return
				}
				k, err := vs.ReadAt(n, p, 0)
				if err != io.EOF || string(p[:k]) != want {
					done <- errors.New("read mismatch")
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// misfitView renders records as themselves and refuses those that say
// "bad".
func misfitView() *decode.Session {
	return decode.NewSession(decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		if bytes.Equal(rec.Payload, []byte("bad")) {
			return decode.Misfit(1, "bad record")
		}
		w.B = append(w.B, rec.Payload...)
		return nil
	}), decode.SessionOptions{Name: "strict"})
}

// TestViewMisfit: a record the decoder does not fit fails Getattr and
// reads with EIO, logged once however often it is asked for; its
// neighbours read as usual.
func TestViewMisfit(t *testing.T) {
	src := &fakeRecords{recs: [][]byte{[]byte("ok"), []byte("bad"), []byte("ok2")}}
	p := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(p, []byte("placeholder"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	lg := logrus.New()
	lg.SetOutput(&logged)
	tr, err := NewFile(p, View(src, misfitView(), ""), Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		node, err := tr.Lookup(ctx, tr.Root(), RecordName(1, 3))
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.Getattr(ctx, node)
		if en := tr.Report(err); en != syscall.EIO || !errors.Is(err, decode.ErrMisfit) {
			t.Fatalf("Getattr of a misfit: %v (errno %v), want EIO", err, en)
		}
		_, err = tr.ReadAt(ctx, node, make([]byte, 10), 0)
		if en := Errno(err); en != syscall.EIO {
			t.Fatalf("read of a misfit: %v, want EIO", err)
		}
	}
	if lines := strings.Count(logged.String(), "\n"); lines != 1 || !strings.Contains(logged.String(), "record 1 at byte 1: bad record") {
		t.Errorf("log:\n%s\nwant one line naming the record", logged.String())
	}
	for _, n := range []int64{0, 2} {
		node, _ := tr.Lookup(ctx, tr.Root(), RecordName(n, 3))
		p := make([]byte, 10)
		k, err := tr.ReadAt(ctx, node, p, 0)
		if err != io.EOF || string(p[:k]) != string(src.recs[n]) {
			t.Errorf("record %d: %q, %v", n, p[:k], err)
		}
	}
}

// countView is a decoder with a summary: how many records say "x".
type countView struct {
	mu sync.Mutex
	n  int
}

func (c *countView) Decode(w *decode.Writer, rec *decode.Record) error {
	w.B = append(w.B, rec.Payload...)
	return nil
}
func (c *countView) Learn(rec *decode.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if string(rec.Payload) == "x" {
		c.n++
	}
	return nil
}
func (c *countView) Reset() { c.mu.Lock(); c.n = 0; c.mu.Unlock() }
func (c *countView) Summary(w *decode.Writer) error {
	w.Begin()
	w.B = fmt.Appendf(w.B, "%d x", c.n)
	w.End()
	return nil
}

// TestViewInfoAndSummary: .recfs says which decoder shows the records and
// why; a decoder's summary is served as .recfs-summary, found by name but
// not listed; a raw view passes records through and says why.
func TestViewInfoAndSummary(t *testing.T) {
	ctx := context.Background()
	src := &fakeRecords{recs: [][]byte{[]byte("x"), []byte("y"), []byte("x")}}
	s := decode.NewSession(&countView{}, decode.SessionOptions{Name: "count"})
	tr, _ := newFileTree(t, View(src, s, "asked for"))
	info := readEntry(t, tr, InfoName)
	if !strings.Contains(info, "decode: count (asked for)\n") || !strings.Contains(info, "decode summary: "+SummaryName) ||
		!strings.Contains(info, "\nsizes: of the decoded text (ls -l, du -b); bytes and file size are of the source\n") {
		t.Errorf(".recfs:\n%s", info)
	}
	if got := readEntry(t, tr, SummaryName); got != "2 x\n" {
		t.Errorf("%s: %q", SummaryName, got)
	}
	d, err := tr.OpenDir(ctx, tr.Root())
	if err != nil {
		t.Fatal(err)
	}
	for e, ok := d.Next(); ok; e, ok = d.Next() {
		if e.Name == SummaryName {
			t.Errorf("%s is listed", SummaryName)
		}
	}

	raw := &fakeRecords{recs: [][]byte{[]byte("\x00raw")}}
	rt, _ := newFileTree(t, View(raw, nil, "auto: raw: no decoder fits"))
	if info := readEntry(t, rt, InfoName); !strings.Contains(info, "decode: raw (auto: raw: no decoder fits)\n") || strings.Contains(info, "sizes:") {
		t.Errorf("raw .recfs:\n%s", info)
	}
	if got := readEntry(t, rt, RecordName(0, 1)); got != "\x00raw" {
		t.Errorf("raw record: %q", got)
	}
	if _, err := rt.Lookup(ctx, rt.Root(), SummaryName); Errno(err) != syscall.ENOENT {
		t.Errorf("raw %s: %v, want ENOENT", SummaryName, err)
	}
}

// readEntry reads the entry name of tr's root through Getattr and Open, and
// checks the size Getattr gave.
func readEntry(t *testing.T, tr *Tree, name string) string {
	t.Helper()
	ctx := context.Background()
	node, err := tr.Lookup(ctx, tr.Root(), name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	a, err := tr.Getattr(ctx, node)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	h, err := tr.Open(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p := make([]byte, a.Size+10)
	k, err := h.ReadAt(p, 0)
	if err != io.EOF || int64(k) != a.Size {
		t.Fatalf("%s: read %d bytes (%v), size %d", name, k, err, a.Size)
	}
	return string(p[:k])
}

// TestViewSizeStopsOnClose: Size, which has no request's context, renders
// with the view's own, done when the view is closed: a render in progress
// (its read blocked as a long inflate runs on) stops at Close and sizes
// nothing, instead of running on after the tree is gone.
func TestViewSizeStopsOnClose(t *testing.T) {
	src := &stoppingRecords{fakeRecords: &fakeRecords{recs: [][]byte{[]byte("abc"), []byte("de")}}, started: make(chan struct{})}
	var calls atomic.Int64
	v := View(src, upperView(&calls), "")
	sized := make(chan int64, 1)
	go func() { sized <- v.Size(0) }()
	select {
	case <-src.started:
	case size := <-sized:
		t.Fatalf("Size rendered record 0 (%d bytes) with a read that cannot stop", size)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	if size := <-sized; size != 0 || calls.Load() != 0 {
		t.Fatalf("Size after Close: %d bytes, %d renders; want 0, 0", size, calls.Load())
	}
}

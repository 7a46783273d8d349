package fs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/recfs/recfs/index"
)

// upperView renders a record as "<n bytes>: UPPER\n" and counts renders.
func upperView(calls *atomic.Int64) RecordView {
	return RecordView{Name: "upper", Render: func(dst, rec []byte) []byte {
		calls.Add(1)
		dst = append(dst, '<')
		dst = append(dst, bytes.ToUpper(rec)...)
		return append(dst, ">\n"...)
	}}
}

// TestViewSizesAndReads: through a tree, a viewed record's size is its
// rendering's length, reads return the rendering, and listing sizes then
// reading in pieces renders each record once.
func TestViewSizesAndReads(t *testing.T) {
	var calls atomic.Int64
	src := &fakeSource{recs: [][]byte{[]byte("abc"), []byte(""), bytes.Repeat([]byte("x"), 1000)}}
	tr, _ := newFileTree(t, View(src, upperView(&calls)))
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
	v := upperView(&calls)
	v.MaxRecord = 10
	src := &fakeSource{recs: [][]byte{[]byte("small"), bytes.Repeat([]byte("y"), 11)}}
	vs := View(src, v)
	if _, err := vs.(sizeErrer).SizeErr(1); !errors.Is(err, ErrTooLarge) {
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
	if size, err := vs.(sizeErrer).SizeErr(0); err != nil || size != int64(len("<SMALL>\n")) {
		t.Fatalf("small record: %d, %v", size, err)
	}
}

// versionedFake is a fakeSource with a generation that Rewrite bumps.
type versionedFake struct {
	fakeSource
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
	src := &versionedFake{fakeSource: fakeSource{recs: [][]byte{[]byte("old")}}}
	vs := View(src, upperView(&calls)).(Versioned)
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
	if size, err := vs.(sizeErrer).SizeErr(0); err != nil || size != int64(len("<NEWER>\n")) {
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
	src := &fakeSource{}
	for i := 0; i < 200; i++ {
		src.recs = append(src.recs, bytes.Repeat([]byte{'a' + byte(i%26)}, i))
	}
	vs := View(src, upperView(&calls))
	done := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func(g int) {
			p := make([]byte, 512)
			for i := 0; i < 400; i++ {
				n := int64((i*7 + g*13) % len(src.recs))
				want := "<" + string(bytes.ToUpper(src.recs[n])) + ">\n"
				size, err := vs.(sizeErrer).SizeErr(n)
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

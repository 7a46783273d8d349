package index

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestAppendFrom: records appended from streams read back in both writable
// formats, and an input that ends early leaves the file byte-identical.
func TestAppendFrom(t *testing.T) {
	ctx := context.Background()
	for _, f := range []codec.Format{codec.LevelDB, codec.RecordIO} {
		t.Run(f.String(), func(t *testing.T) {
			tb, path := createTable(t, f, f == codec.RecordIO)
			recs := [][]byte{[]byte("one"), bytes.Repeat([]byte("big"), 50000), {}}
			var srcs []Stream
			for _, r := range recs {
				srcs = append(srcs, Stream{R: bytes.NewReader(r), Size: int64(len(r))})
			}
			first, err := tb.AppendFrom(ctx, srcs, AppendOptions{Sync: true})
			if err != nil || first != 0 || tb.Len() != 3 {
				t.Fatalf("AppendFrom: first %d, %d records, %v", first, tb.Len(), err)
			}
			for i, r := range recs {
				if got := readRecord(t, tb, int64(i)); !bytes.Equal(got, r) {
					t.Fatalf("record %d differs", i)
				}
			}
			before, _ := os.ReadFile(path)
			_, err = tb.AppendFrom(ctx, []Stream{
				{R: bytes.NewReader([]byte("fine")), Size: 4},
				{R: bytes.NewReader(make([]byte, 90000)), Size: 90001},
			}, AppendOptions{})
			if !errors.Is(err, codec.ErrShortInput) {
				t.Fatalf("short input: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != 3 {
				t.Fatalf("failed append changed the file (%d -> %d bytes, %d records)", len(before), len(after), tb.Len())
			}
		})
	}
}

// TestLineRecords: lines without their "\n" or "\r\n", a last line without
// a newline, no line for an empty input, inputs in turn, and a line longer
// than the read buffer.
func TestLineRecords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("l", 3*lineChunk+5)
	for _, c := range []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", []string{""}, nil},
		{"none", nil, nil},
		{"lines", []string{"a\nb\r\n\nc"}, []string{"a", "b", "", "c"}},
		{"inputs", []string{"a\n", "", "b", "c\n"}, []string{"a", "b", "c"}},
		{"long", []string{"x\n" + long + "\ny"}, []string{"x", long, "y"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs []io.Reader
			for _, s := range c.in {
				rs = append(rs, strings.NewReader(s))
			}
			var got []string
			for l := LineRecords(rs...); l.Next(); {
				got = append(got, string(l.Record()))
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("%d lines %.40q, want %d %.40q", len(got), got, len(c.want), c.want)
			}
		})
	}
}

// failingReader yields its bytes, then fails.
type failingReader struct{ b []byte }

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errInput
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

var errInput = errors.New("input failed")

// TestAppendStreamFails: an input that fails after records were already
// written (more than the writer's buffer) leaves the file byte-identical
// and the table as it was, in every writable format; a clean stream
// appends every line.
func TestAppendStreamFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, f := range []codec.Format{codec.LevelDB, codec.RecordIO, codec.TFRecord} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			tb, path := createTable(t, f, false)
			first, n, err := tb.AppendStream(ctx, LineRecords(strings.NewReader("one\ntwo\n")), AppendOptions{})
			if err != nil || first != 0 || n != 2 || tb.Len() != 2 || string(readRecord(t, tb, 1)) != "two" {
				t.Fatalf("AppendStream: first %d, %d appended, %d records, %v", first, n, tb.Len(), err)
			}
			before, _ := os.ReadFile(path)
			lines := bytes.Repeat([]byte(strings.Repeat("r", 99)+"\n"), 20000) // 2 MB: written before the failure
			_, _, err = tb.AppendStream(ctx, LineRecords(&failingReader{b: lines}), AppendOptions{})
			if !errors.Is(err, errInput) {
				t.Fatalf("failing input: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != 2 {
				t.Fatalf("failed append changed the file (%d -> %d bytes, %d records)", len(before), len(after), tb.Len())
			}
		})
	}
}

// createTable creates an empty record file of format f (with a trailer
// when asked) in a new temporary directory and returns its writable table,
// closed when t ends, and its path.
func createTable(t *testing.T, f codec.Format, trailer bool) (*Table, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a")
	tb, err := Create(context.Background(), path, f, trailer, Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb, path
}

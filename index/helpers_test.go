package index

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/source/local"
)

// untilStopped runs n goroutines, goroutine g calling work(g, k) for
// k = 0, 1, ... until work returns false or stop is called; stop waits
// for them all to end (calling it again does nothing).
func untilStopped(n int, work func(g, k int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				if !work(g, k) {
					return
				}
			}
		}()
	}
	return sync.OnceFunc(func() { close(done); wg.Wait() })
}

// rioScanAll reads every item of the recordio file data strictly, through
// a table built over it, and returns them with the trailer (nil if none).
func rioScanAll(t testing.TB, data []byte) ([][]byte, []byte) {
	t.Helper()
	tb, err := Build(context.Background(), bytes.NewReader(data), int64(len(data)), Options{Strict: true})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	items := readAll(t, tb)
	if !tb.HasTrailer() {
		return items, nil
	}
	tr := make([]byte, tb.TrailerSize())
	if n, err := tb.ReadTrailerAt(tr, 0); n != len(tr) || (err != nil && err != io.EOF) {
		t.Fatalf("trailer: %d bytes, %v", n, err)
	}
	return items, tr
}

// readAll reads every record of tb.
func readAll(t testing.TB, tb *Table) [][]byte {
	t.Helper()
	var out [][]byte
	for i := range tb.Len() {
		b := make([]byte, tb.Size(i))
		if n, err := tb.ReadAt(i, b, 0); n != len(b) || (err != nil && err != io.EOF) {
			t.Fatalf("record %d: %d bytes, %v", i, n, err)
		}
		out = append(out, b)
	}
	return out
}

// equalItems reports whether a and b hold the same items.
func equalItems(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}

// openTemp writes b to a new file in a temporary directory and opens its
// table with o; the table is closed when the test ends.
func openTemp(t testing.TB, b []byte, o Options) (*Table, string) {
	t.Helper()
	return openNamed(t, "src", b, o)
}

// openNamed is openTemp with the file named name, for tests whose format
// choice or writer flavour goes by the name (a Kafka segment's offset, a
// WAL's log number, an extension).
func openNamed(t testing.TB, name string, b []byte, o Options) (*Table, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	recfile.WriteFile(t, path, b)
	tb, err := Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb, path
}

// follow makes tb follow its source every millisecond until the returned
// function is called, which waits for following to end.
func follow(tb *Table) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		tb.Follow(ctx, time.Millisecond, nil, nil)
	}()
	return func() { cancel(); <-followed }
}

// openFile is OpenSource of f, a file the caller opened, as a local file
// named path whose refreshes look at the path again through reopen (nil:
// by the path). On failure f is left to the caller.
func openFile(ctx context.Context, f *os.File, path string, reopen func() (*os.File, error), o Options) (*Table, error) {
	src, err := local.NewReopening(f, path, reopen)
	if err != nil {
		return nil, err
	}
	return OpenSource(ctx, src, o)
}

// localOf is f, a file the test opened, as a local source named path.
func localOf(t testing.TB, f *os.File, path string) *local.File {
	t.Helper()
	src, err := local.New(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

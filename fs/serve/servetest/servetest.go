// Package servetest holds what the tests of the network adapters share:
// a record source of any size that costs no memory, trees with a
// directory outside them to attack, and HTTP requests sent as they are.
package servetest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/index"
)

// Synth is read-only fs.Records of N records made on the fly: record n
// is Record(n). It keeps nothing per record, so a test can serve millions
// of them and watch the server's memory alone.
type Synth struct{ N int64 }

var _ fs.Records = Synth{}

// Record returns the bytes of record n: "record <n>\n" followed by n%50
// letters.
func Record(n int64) []byte {
	b := fmt.Appendf(nil, "record %d\n", n)
	for i := int64(0); i < n%50; i++ {
		b = append(b, byte('a'+(n+i)%26))
	}
	return b
}

// Len returns the number of records.
func (s Synth) Len() int64 { return s.N }

// Size returns the length of record n.
func (s Synth) Size(n int64) int64 { return int64(len(Record(n))) }

// Offset returns a made-up offset: 100 bytes a record.
func (s Synth) Offset(n int64) int64 { return 100 * n }

// ReadAt reads record n.
func (s Synth) ReadAt(n int64, p []byte, off int64) (int, error) {
	if n < 0 || n >= s.N {
		return 0, index.ErrRange
	}
	return bytes.NewReader(Record(n)).ReadAt(p, off)
}

// HasTrailer reports false.
func (s Synth) HasTrailer() bool { return false }

// TrailerSize returns 0.
func (s Synth) TrailerSize() int64 { return 0 }

// ReadTrailerAt reads nothing.
func (s Synth) ReadTrailerAt([]byte, int64) (int, error) { return 0, io.EOF }

// Header returns no entries.
func (s Synth) Header() []index.HeaderEntry { return nil }

// Damage returns no ranges.
func (s Synth) Damage() []codec.Damage { return nil }

// Info summarises the source.
func (s Synth) Info() index.Info {
	return index.Info{Flavor: "synthetic", Records: s.N, Loaded: "built", Trailer: -1}
}

// Close does nothing.
func (s Synth) Close() error { return nil }

// FileTree returns the tree of one record file served from src.
func FileTree(t testing.TB, src fs.Records) *fs.Tree {
	return fusetest.FileTree(t, src, fs.Options{Logger: codectest.QuietLogger()})
}

// SwapFixture writes a directory tree to serve (src: sub/file.txt,
// sub/a.log, other.txt, fake record files holding "mine") and, beside it,
// a directory outside (file.txt and a.log, holding "SECRET").
func SwapFixture(t testing.TB) (src, outside string) {
	t.Helper()
	base := t.TempDir()
	src, outside = filepath.Join(base, "src"), filepath.Join(base, "outside")
	fusetest.WriteFiles(t, src, map[string]string{
		"sub/file.txt": "plain\n",
		"sub/a.log":    fusetest.FakeLog("mine", "mine too"),
		"other.txt":    "other\n",
	})
	fusetest.WriteFiles(t, outside, map[string]string{
		"file.txt": "SECRET\n",
		"a.log":    fusetest.FakeLog("SECRET"),
	})
	return src, outside
}

// Swap replaces path with a symbolic link to target.
func Swap(t testing.TB, path, target string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// DirTree returns the tree of the directory dir of fake record files.
func DirTree(t testing.TB, dir string) *fs.Tree {
	return fusetest.DirTree(t, dir, fs.Options{Logger: codectest.QuietLogger()})
}

// Do sends one request and returns the response with its body read.
func Do(t testing.TB, method, url string, hdr map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// Raw sends a request whose target is written exactly as given (no
// client cleans it), with "Depth: 1", to the server at addr, and returns
// the status and body.
func Raw(t testing.TB, addr, method, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nDepth: 1\r\nConnection: close\r\n\r\n", method, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

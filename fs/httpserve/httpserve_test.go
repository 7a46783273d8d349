package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/fs/serve/servetest"
	"github.com/recfs/recfs/index"
)

// server serves tree over HTTP for the test.
func server(t *testing.T, tree *fs.Tree, o Options) *httptest.Server {
	t.Helper()
	if o.Logger == nil {
		o.Logger = codectest.QuietLogger()
	}
	h := New(tree, o)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv
}

// do sends a request without a body (see servetest.Do).
func do(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return servetest.Do(t, method, url, hdr, "")
}

// walTree writes a leveldb log of n WriteBatches (record 5's bytes
// flipped when damaged: the reader then drops the rest of its block, and
// only records 0-4 remain) and returns its tree and the offset of record 5.
func walTree(t *testing.T, n int, damaged bool) (*fs.Tree, int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "000003.log")
	w, err := index.Create(ctx, path, codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for i := range n {
		recs = append(recs, codectest.PutBatch(uint64(100+i), fmt.Sprintf("user%04d", i), fmt.Sprintf("value number %d", i)))
	}
	if _, err := w.Append(ctx, recs, index.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	off5 := w.Offset(5)
	w.Close()
	if damaged {
		codectest.FlipByte(t, path, off5+10)
	}
	tb, err := index.Open(ctx, path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fs.NewFile(path, tb, fs.Options{Logger: codectest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return tree, off5
}

func TestFilesAndRanges(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(200, -1, []byte("TRAILER"))
	srv := server(t, servetest.FileTree(t, src), Options{})
	for n := int64(0); n < src.Len(); n++ {
		resp, b := do(t, "GET", srv.URL+"/"+fs.RecordName(n, 200), nil)
		if resp.StatusCode != 200 || !bytes.Equal(b, fusetest.Payload(n)) {
			t.Fatalf("record %d: %s, %d bytes", n, resp.Status, len(b))
		}
	}
	want := fusetest.Payload(96)
	resp, b := do(t, "GET", srv.URL+"/96", map[string]string{"Range": "bytes=100-199"})
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, want[100:200]) {
		t.Fatalf("range: %s %d", resp.Status, len(b))
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := do(t, "GET", srv.URL+"/96", map[string]string{"If-None-Match": etag}); etag == "" || resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match %q: %s", etag, resp.Status)
	}
	if resp, b := do(t, "GET", srv.URL+"/trailer/0", nil); string(b) != "TRAILER" {
		t.Fatalf("trailer: %s %q", resp.Status, b)
	}
	if resp, _ := do(t, "GET", srv.URL+"/trailer", nil); resp.Request.URL.Path != "/trailer/" {
		t.Fatalf("a directory without its slash is not redirected: %s", resp.Request.URL.Path)
	}
	for _, m := range []string{"PUT", "DELETE", "POST", "MKCOL", "PROPFIND"} {
		resp, _ := do(t, m, srv.URL+"/000001", nil)
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %s", m, resp.Status)
		}
	}
}

// listing is the JSON listing.
type listing struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Total   int    `json:"total"`
	Info    []struct{ Key, Value string }
	Damage  []damage `json:"damage"`
	Entries []struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Size   int64  `json:"size"`
		Record *int64 `json:"record"`
		Offset *int64 `json:"offset"`
	} `json:"entries"`
}

func TestJSONListing(t *testing.T) {
	t.Parallel()
	tree, off5 := walTree(t, 12, true)
	srv := server(t, tree, Options{})
	for _, req := range []struct {
		url string
		hdr map[string]string
	}{{srv.URL + "/?json", nil}, {srv.URL + "/", map[string]string{"Accept": "application/json"}}} {
		resp, b := do(t, "GET", req.url, req.hdr)
		var l listing
		if err := json.Unmarshal(b, &l); err != nil || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v %s\n%s", req.url, err, resp.Header.Get("Content-Type"), b)
		}
		if l.Type != "records" || len(l.Damage) != 1 || l.Damage[0].Reason == "" || l.Damage[0].Offset != off5 {
			t.Fatalf("listing: type %q damage %v", l.Type, l.Damage)
		}
		var last int64 = -1
		records := 0
		for _, e := range l.Entries {
			if e.Record == nil {
				continue
			}
			records++
			if e.Offset == nil || *e.Offset <= last {
				t.Fatalf("%s: offset %v after %d", e.Name, e.Offset, last)
			}
			last = *e.Offset
		}
		if records != 5 || l.Total != 6 { // 5 records and .recfs
			t.Fatalf("%d records listed (total %d), want the 5 before the damage", records, l.Total)
		}
	}
	var l listing
	_, b := do(t, "GET", srv.URL+"/?json&offset=1&limit=3", nil)
	if err := json.Unmarshal(b, &l); err != nil || len(l.Entries) != 3 || l.Entries[0].Record == nil || *l.Entries[0].Record != 1 {
		t.Fatalf("a page of the listing: %v %s", err, b)
	}
}

func TestIndexForWget(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	srv := server(t, servetest.DirTree(t, src), Options{})
	_, b := do(t, "GET", srv.URL+"/sub/", map[string]string{"Accept": "*/*"})
	for _, want := range []string{`<a href="a.log/">a.log/</a>`, `<a href="file.txt">file.txt</a>`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("index lacks %s:\n%s", want, b)
		}
	}
}

func TestBrowsePages(t *testing.T) {
	t.Parallel()
	tree, _ := walTree(t, 30, false)
	plan, err := decoders.Prepare(decoders.Spec{Mode: decoders.ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, tree, Options{Decoders: plan, PageSize: 10})
	html := map[string]string{"Accept": "text/html"}
	_, b := do(t, "GET", srv.URL+"/", html)
	page := string(b)
	for _, want := range []string{"Records", "format", "leveldb", "damaged range", `href="000000?view"`, "next ›", "entries 1–10 of"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the directory page lacks %q:\n%s", want, page)
		}
	}
	_, b = do(t, "GET", srv.URL+"/?offset=20&limit=10", html)
	if !strings.Contains(string(b), "000029") || strings.Contains(string(b), ">000000<") {
		t.Fatalf("the third page:\n%s", b)
	}
	_, b = do(t, "GET", srv.URL+"/000002?view", html)
	page = string(b)
	for _, want := range []string{"Decoded (batch)", `<pre id="decoded">batch seq 102 count 1` + "\nput user0002 value", "00000000  ", "Hex", `href="000001?view"`, `href="000003?view"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("the record page lacks %q:\n%s", want, page)
		}
	}
}

// TestSearchMatchesGrep: a search finds what grep -rnE finds in a
// directory of files holding the same bytes as the tree.
func TestSearchMatchesGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("no grep")
	}
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	fusetest.WriteFiles(t, src, map[string]string{
		"logs/b.log": fusetest.FakeLog("alpha mine", "beta", "gamma MINE", "mine\x00binary"),
		"notes.txt":  "a mine here\nnone\nmine again\n",
	})
	tree := servetest.DirTree(t, src)
	// The same bytes as plain files, for grep.
	mirror := t.TempDir()
	if err := iofsCopy(tree, mirror); err != nil {
		t.Fatal(err)
	}
	srv := server(t, tree, Options{})
	for _, q := range []struct{ query, grepArgs string }{
		{"search=mine", "-rnE mine"}, {"search=m.ne&icase=1", "-rniE m.ne"}, {"search=a.log&fixed=1", "-rnF a.log"},
		{"search=^(alpha|beta)$|again", "-rnE ^(alpha|beta)$|again"},
	} {
		_, b := do(t, "GET", srv.URL+"/?"+strings.ReplaceAll(q.query, "|", "%7C"), nil)
		args := strings.SplitN(q.grepArgs, " ", 2)
		cmd := exec.Command("grep", args[0], args[1], ".")
		cmd.Dir = mirror
		out, _ := cmd.CombinedOutput() // grep says "binary file matches" on stderr
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			l = strings.TrimPrefix(l, "./")
			if strings.HasPrefix(l, "Binary file ./") || strings.HasPrefix(l, "grep: ./") {
				l = "Binary file " + strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(l, "Binary file ./"), "grep: ./"), ": binary file matches")
				l = strings.TrimSuffix(l, " matches") + " matches"
			}
			if l != "" {
				want = append(want, l)
			}
		}
		got := strings.Split(strings.TrimSpace(string(b)), "\n")
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", q.query, got, want)
		}
	}
}

// iofsCopy writes every file of tree below dir.
func iofsCopy(tree *fs.Tree, dir string) error {
	fsys := tree.FS()
	return iofs.WalkDir(fsys, ".", func(p string, d iofs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := iofs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func TestTraversalRefused(t *testing.T) {
	t.Parallel()
	src, outside := servetest.SwapFixture(t)
	srv := server(t, servetest.DirTree(t, src), Options{})
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, target := range []string{
		"/../outside/file.txt", "/sub/../../outside/file.txt", "/%2e%2e/outside/file.txt", "/%2E%2E%2Foutside%2Ffile.txt",
		"/sub/%2e%2e/%2e%2e/outside/a.log/0", "/./sub/file.txt", "/sub//file.txt", "/sub/file.txt%00", "/..%5coutside%5cfile.txt",
		"/sub/%2e%2e/?json", "/%2e%2e/?search=SECRET", "/sub/..%2f..%2f?view",
	} {
		status, body := servetest.Raw(t, addr, "GET", target)
		if status != http.StatusNotFound && status != http.StatusBadRequest || strings.Contains(body, "SECRET") {
			t.Errorf("GET %s: %d %q", target, status, body)
		}
	}
	if status, body := servetest.Raw(t, addr, "GET", "/sub/file.txt"); status != 200 || body != "plain\n" {
		t.Fatalf("a plain file: %d %q", status, body)
	}
	servetest.Swap(t, src+"/sub", outside)
	for _, p := range []string{"/sub/file.txt", "/sub/a.log/000000", "/sub/?json", "/?search=SECRET", "/sub/a.log/000000?view"} {
		if status, body := servetest.Raw(t, addr, "GET", p); status == 200 && strings.Contains(p, "sub/") || strings.Contains(body, "SECRET") {
			t.Errorf("GET %s after the swap: %d %q", p, status, body)
		}
	}
}

func FuzzParseInfo(f *testing.F) {
	f.Add([]byte("format: leveldb\nrecords: 5\ndamage: offset=220 length=310 reason=\"checksum mismatch\"\nstale: offset=1 length=2 reason=\"x\"\n"))
	f.Add([]byte("damage: offset=x length=1 reason=\"\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		in := parseInfo(text)
		for _, d := range in.damage {
			// What was parsed, written again, parses the same.
			again, ok := parseDamage(fmt.Sprintf("offset=%d length=%d reason=%q", d.Offset, d.Length, d.Reason))
			again.Stale = d.Stale
			if !ok || again != d {
				t.Fatalf("damage %+v parses again as %+v (%v)", d, again, ok)
			}
		}
	})
}

// stopCounting is a source whose reads of record n are counted by kind:
// those that can stop (ReadAtContext with a context that can be done)
// and those that cannot.
type stopCounting struct {
	*fusetest.MemSource
	n int64

	mu              sync.Mutex
	stopping, plain int
}

func (s *stopCounting) count(n int64, stops bool) {
	if n != s.n {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stops {
		s.stopping++
	} else {
		s.plain++
	}
}

func (s *stopCounting) ReadAt(n int64, p []byte, off int64) (int, error) {
	s.count(n, false)
	return s.MemSource.ReadAt(n, p, off)
}

func (s *stopCounting) ReadAtContext(ctx context.Context, n int64, p []byte, off int64) (int, error) {
	s.count(n, ctx.Done() != nil)
	return s.MemSource.ReadAt(n, p, off)
}

func (s *stopCounting) ReadAtGenerationContext(ctx context.Context, _ uint64, n int64, p []byte, off int64) (int, error) {
	return s.ReadAtContext(ctx, n, p, off)
}

// TestRecordReadsStopWithRequest: a record's page (its text, hex and decoded
// rendering), a decoded search, the record's bytes and a search of them
// read the record with the request's context, so that a client gone stops the read (a long span of a
// compressed file) instead of leaving the server at it: counted, every
// read of the record can stop.
func TestRecordReadsStopWithRequest(t *testing.T) {
	t.Parallel()
	src := &stopCounting{MemSource: fusetest.NewMemSource(30, -1, nil), n: 20}
	plan, err := decoders.Prepare(decoders.Spec{Mode: "protobuf"})
	if err != nil {
		t.Fatal(err)
	}
	srv := server(t, servetest.FileTree(t, src), Options{Decoders: plan})
	for _, path := range []string{"/000020?view", "/?search=zzz&decoded=1", "/000020", "/?search=zzz"} {
		resp, b := do(t, "GET", srv.URL+path, map[string]string{"Accept": "text/html"})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s\n%s", path, resp.Status, b)
		}
		src.mu.Lock()
		stopping, plain := src.stopping, src.plain
		src.stopping, src.plain = 0, 0
		src.mu.Unlock()
		if plain > 0 || stopping == 0 {
			t.Errorf("%s: record 20 read %d times with the request's context, %d times with none", path, stopping, plain)
		}
	}
}

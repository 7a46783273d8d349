package webdav

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/fusetest"
	"github.com/recfs/recfs/fs/serve/servetest"
)

// server serves tree over WebDAV for the test.
// do and raw send requests (see servetest).
var do, raw = servetest.Do, servetest.Raw

func server(t *testing.T, tree *fs.Tree) *httptest.Server {
	t.Helper()
	h := New(tree, Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return srv
}

func TestGetRecords(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(300, -1, []byte("TRAILER"))
	srv := server(t, servetest.FileTree(t, src))
	for n := int64(0); n < src.Len(); n++ {
		for _, name := range []string{fs.RecordName(n, src.Len()), fmt.Sprint(n)} {
			resp, b := do(t, "GET", srv.URL+"/"+name, nil, "")
			if resp.StatusCode != 200 || !bytes.Equal(b, fusetest.Payload(n)) {
				t.Fatalf("GET %s: %s, %d bytes, want %d bytes", name, resp.Status, len(b), len(fusetest.Payload(n)))
			}
		}
	}
	resp, b := do(t, "GET", srv.URL+"/trailer/000000", nil, "")
	if resp.StatusCode != 200 || string(b) != "TRAILER" {
		t.Fatalf("trailer: %s %q", resp.Status, b)
	}
	resp, b = do(t, "GET", srv.URL+"/.recfs", nil, "")
	if resp.StatusCode != 200 || !strings.Contains(string(b), "records: 300\n") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf(".recfs: %s %s %q", resp.Status, resp.Header.Get("Content-Type"), b)
	}
	for _, name := range []string{"300", "0000300", "x", "000001/y"} {
		if resp, _ := do(t, "GET", srv.URL+"/"+name, nil, ""); resp.StatusCode != 404 {
			t.Errorf("GET %s: %s, want 404", name, resp.Status)
		}
	}
	if resp, _ := do(t, "GET", srv.URL+"/", nil, ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET of a directory: %s, want 405", resp.Status)
	}
}

func TestRangeAndValidators(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(100, -1, nil)
	srv := server(t, servetest.FileTree(t, src))
	want := fusetest.Payload(96) // 40 KB
	resp, b := do(t, "GET", srv.URL+"/000096", map[string]string{"Range": "bytes=1000-1999"}, "")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, want[1000:2000]) {
		t.Fatalf("range: %s, %d bytes", resp.Status, len(b))
	}
	if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes 1000-1999/%d", len(want)) {
		t.Fatalf("Content-Range %q", cr)
	}
	resp, b = do(t, "GET", srv.URL+"/000096", map[string]string{"Range": "bytes=-10"}, "")
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, want[len(want)-10:]) {
		t.Fatalf("suffix range: %s, %q", resp.Status, b)
	}
	resp, _ = do(t, "GET", srv.URL+"/000096", nil, "")
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" || lm == "" {
		t.Fatalf("no validators: ETag %q Last-Modified %q", etag, lm)
	}
	other, _ := do(t, "GET", srv.URL+"/000095", nil, "")
	if other.Header.Get("ETag") == etag {
		t.Fatalf("two records share the ETag %s", etag)
	}
	if resp, _ := do(t, "GET", srv.URL+"/000096", map[string]string{"If-None-Match": etag}, ""); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %s, want 304", resp.Status)
	}
	if resp, _ := do(t, "GET", srv.URL+"/000096", map[string]string{"If-Modified-Since": lm}, ""); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-Modified-Since: %s, want 304", resp.Status)
	}
	resp, b = do(t, "HEAD", srv.URL+"/000096", nil, "")
	if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != int64(len(want)) {
		t.Fatalf("HEAD: %s, length %d, body %d", resp.Status, resp.ContentLength, len(b))
	}
}

func TestDamagedRecordFails(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(10, 3, nil)
	srv := server(t, servetest.FileTree(t, src))
	resp, err := http.Get(srv.URL + "/000003")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	// The status line may be out before the damage is met: then the
	// transfer is cut short instead.
	if resp.StatusCode == 200 && err == nil || resp.StatusCode == 404 {
		t.Fatalf("damaged record: %s %q (%v), want a server error or a failed transfer", resp.Status, b, err)
	}
}

// multistatus is a parsed PROPFIND answer: href → status → property →
// normalised value.
type multistatus map[string]map[string]map[string]string

func parseMultistatus(t *testing.T, b []byte) multistatus {
	t.Helper()
	var ms struct {
		Responses []struct {
			Href     string `xml:"DAV: href"`
			Status   string `xml:"DAV: status"`
			Propstat []struct {
				Status string `xml:"DAV: status"`
				Prop   struct {
					Any []struct {
						XMLName xml.Name
						Inner   string `xml:",innerxml"`
					} `xml:",any"`
				} `xml:"DAV: prop"`
			} `xml:"DAV: propstat"`
		} `xml:"DAV: response"`
	}
	if err := xml.Unmarshal(b, &ms); err != nil {
		t.Fatalf("multistatus: %v\n%s", err, b)
	}
	out := multistatus{}
	for _, r := range ms.Responses {
		m := map[string]map[string]string{}
		if r.Status != "" {
			m[r.Status] = nil
		}
		for _, ps := range r.Propstat {
			props := map[string]string{}
			for _, p := range ps.Prop.Any {
				props[p.XMLName.Space+" "+p.XMLName.Local] = normXML(t, p.Inner)
			}
			m[ps.Status] = props
		}
		out[r.Href] = m
	}
	return out
}

// normXML renders inner XML as local names and text, without prefixes.
func normXML(t *testing.T, s string) string {
	d := xml.NewDecoder(strings.NewReader(s))
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			b.WriteString("<" + tk.Name.Local + ">")
		case xml.EndElement:
			b.WriteString("</" + tk.Name.Local + ">")
		case xml.CharData:
			b.Write(tk)
		}
	}
}

// propfindBodies are the bodies of the PROPFIND kinds.
var propfindBodies = map[string]string{
	"empty":    "",
	"allprop":  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`,
	"propname": `<?xml version="1.0"?><propfind xmlns="DAV:"><propname/></propfind>`,
	"prop": `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:x="urn:x"><D:prop><D:getcontentlength/><D:getetag/>` +
		`<D:displayname/><D:resourcetype/><D:getlastmodified/><D:getcontenttype/><D:creationdate/><x:foo/></D:prop></D:propfind>`,
	"include": `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:x="urn:x"><D:allprop/><D:include><x:bar/></D:include></D:propfind>`,
}

// TestPropfindDepth1MatchesLibrary: every response of the streamed depth-1
// answer is what x/net/webdav answers a depth-0 PROPFIND of the entry.
func TestPropfindDepth1MatchesLibrary(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	fusetest.WriteFiles(t, src, map[string]string{"name with space & <x>.log": fusetest.FakeLog("a", "b")})
	trees := map[string]*fs.Tree{
		"file": servetest.FileTree(t, fusetest.NewMemSource(30, -1, []byte("T"))),
		"dir":  servetest.DirTree(t, src),
	}
	dirs := map[string][]string{"file": {"/", "/trailer/"}, "dir": {"/", "/sub/", "/sub/a.log/", "/name%20with%20space%20&%20%3Cx%3E.log/"}}
	for tname, tree := range trees {
		srv := server(t, tree)
		for _, dir := range dirs[tname] {
			for bname, body := range propfindBodies {
				resp, b := do(t, "PROPFIND", srv.URL+dir, map[string]string{"Depth": "1"}, body)
				if resp.StatusCode != http.StatusMultiStatus {
					t.Fatalf("%s %s %s: %s\n%s", tname, dir, bname, resp.Status, b)
				}
				got := parseMultistatus(t, b)
				if len(got) < 2 {
					t.Fatalf("%s %s %s: %d responses\n%s", tname, dir, bname, len(got), b)
				}
				for href, props := range got {
					resp, b := do(t, "PROPFIND", srv.URL+href, map[string]string{"Depth": "0"}, body)
					if resp.StatusCode != http.StatusMultiStatus {
						t.Fatalf("depth 0 of %s: %s", href, resp.Status)
					}
					want := parseMultistatus(t, b)
					if fmt.Sprint(want[href]) != fmt.Sprint(props) {
						t.Errorf("%s %s %s: %s\n got %v\nwant %v", tname, dir, bname, href, props, want[href])
					}
				}
			}
		}
	}
}

func TestPropfindListsEveryRecord(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(1234, -1, nil)
	srv := server(t, servetest.FileTree(t, src))
	resp, b := do(t, "PROPFIND", srv.URL+"/", map[string]string{"Depth": "1"}, propfindBodies["prop"])
	if resp.StatusCode != http.StatusMultiStatus {
		t.Fatalf("%s", resp.Status)
	}
	ms := parseMultistatus(t, b)
	var names []string
	for href, st := range ms {
		if href == "/" || href == "/.recfs" {
			continue
		}
		n := int64(len(names))
		_ = n
		names = append(names, href)
		size := st["HTTP/1.1 200 OK"]["DAV: getcontentlength"]
		var rec int64
		fmt.Sscanf(href, "/%d", &rec)
		if size != fmt.Sprint(len(fusetest.Payload(rec))) {
			t.Fatalf("%s: size %s, want %d", href, size, len(fusetest.Payload(rec)))
		}
	}
	sort.Strings(names)
	if len(names) != 1234 || names[0] != "/000000" || names[1233] != "/001233" {
		t.Fatalf("%d records listed: %v...", len(names), names[:3])
	}
}

func TestPropfindInfinityRefused(t *testing.T) {
	t.Parallel()
	srv := server(t, servetest.FileTree(t, fusetest.NewMemSource(3, -1, nil)))
	for _, depth := range []string{"infinity", ""} {
		hdr := map[string]string{}
		if depth != "" {
			hdr["Depth"] = depth
		}
		resp, b := do(t, "PROPFIND", srv.URL+"/", hdr, "")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "propfind-finite-depth") {
			t.Errorf("Depth %q: %s %s", depth, resp.Status, b)
		}
	}
	resp, _ := do(t, "PROPFIND", srv.URL+"/", map[string]string{"Depth": "1"}, "<not xml")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad body: %s", resp.Status)
	}
}

func TestWritesRefused(t *testing.T) {
	t.Parallel()
	src := fusetest.NewMemSource(3, -1, nil)
	srv := server(t, servetest.FileTree(t, src))
	for _, m := range []string{"PUT", "DELETE", "MKCOL", "COPY", "MOVE", "PROPPATCH", "LOCK", "UNLOCK", "POST", "PATCH"} {
		for _, p := range []string{"/", "/000001", "/new"} {
			resp, b := do(t, m, srv.URL+p, map[string]string{"Destination": srv.URL + "/x"}, "data")
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "read-only") {
				t.Errorf("%s %s: %s %q", m, p, resp.Status, b)
			}
		}
	}
	if resp, _ := do(t, "TRACE", srv.URL+"/", nil, ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("TRACE: %s", resp.Status)
	}
	if src.Len() != 3 {
		t.Fatalf("source has %d records", src.Len())
	}
	resp, _ := do(t, "OPTIONS", srv.URL+"/000001", nil, "")
	if resp.Header.Get("DAV") != "1" || strings.Contains(resp.Header.Get("Allow"), "PUT") {
		t.Fatalf("OPTIONS: DAV %q Allow %q", resp.Header.Get("DAV"), resp.Header.Get("Allow"))
	}
}

func TestTraversalRefused(t *testing.T) {
	t.Parallel()
	src, _ := servetest.SwapFixture(t)
	srv := server(t, servetest.DirTree(t, src))
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, target := range []string{
		"/../outside/file.txt", "/sub/../../outside/file.txt", "/%2e%2e/outside/file.txt", "/%2E%2E%2Foutside%2Ffile.txt",
		"/sub/%2e%2e/%2e%2e/outside/a.log/0", "/./sub/file.txt", "/sub//file.txt", "/sub/file.txt%00", "/..%5coutside%5cfile.txt",
	} {
		for _, m := range []string{"GET", "PROPFIND"} {
			status, body := raw(t, addr, m, target)
			if status != http.StatusNotFound && status != http.StatusBadRequest || strings.Contains(body, "SECRET") {
				t.Errorf("%s %s: %d %q", m, target, status, body)
			}
		}
	}
	if status, body := raw(t, addr, "GET", "/sub/file.txt"); status != 200 || body != "plain\n" {
		t.Fatalf("a plain file: %d %q", status, body)
	}
}

func TestSymlinkSwapRefused(t *testing.T) {
	t.Parallel()
	src, outside := servetest.SwapFixture(t)
	srv := server(t, servetest.DirTree(t, src))
	if resp, b := do(t, "GET", srv.URL+"/sub/a.log/000000", nil, ""); resp.StatusCode != 200 || string(b) != "mine" {
		t.Fatalf("before the swap: %s %q", resp.Status, b)
	}
	servetest.Swap(t, src+"/sub", outside)
	for _, p := range []string{"/sub/file.txt", "/sub/a.log/000000", "/sub/a.log/.recfs"} {
		resp, b := do(t, "GET", srv.URL+p, nil, "")
		if resp.StatusCode == 200 || strings.Contains(string(b), "SECRET") {
			t.Errorf("GET %s after the swap: %s %q", p, resp.Status, b)
		}
	}
	resp, b := do(t, "PROPFIND", srv.URL+"/sub/", map[string]string{"Depth": "1"}, "")
	if strings.Contains(string(b), "SECRET") || resp.StatusCode == http.StatusMultiStatus && strings.Contains(string(b), "a.log") {
		t.Errorf("PROPFIND after the swap: %s\n%s", resp.Status, b)
	}
}

// TestPropfindMemoryBounded: a depth-1 PROPFIND of a directory of many
// records is written as it is made, within a memory bound that does not
// grow with the directory.
func TestPropfindMemoryBounded(t *testing.T) {
	n := int64(100_000)
	if testing.Short() {
		n = 30_000
	}
	srv := server(t, servetest.FileTree(t, servetest.Synth{N: n}))
	req, _ := http.NewRequest("PROPFIND", srv.URL+"/", strings.NewReader(propfindBodies["prop"]))
	req.Header.Set("Depth", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var peak uint64
	var ms runtime.MemStats
	br := bufio.NewReaderSize(resp.Body, 1<<16)
	var responses int64
	for {
		line, err := br.ReadSlice('>')
		if bytes.HasSuffix(line, []byte("</D:response>")) {
			responses++
			if responses%(n/8) == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			t.Fatal(err)
		}
	}
	if responses != n+2 { // the directory, the records, .recfs
		t.Fatalf("%d responses, want %d", responses, n+2)
	}
	if peak > 16<<20 {
		t.Fatalf("heap reached %d MiB while listing %d records", peak>>20, n)
	}
	t.Logf("%d records listed, heap at most %.1f MiB", n, float64(peak)/(1<<20))
}

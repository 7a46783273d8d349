package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// fakeS3 is a path-style S3 endpoint over http.ServeContent, which handles
// Range, suffix ranges, If-Match (412) and unsatisfiable ranges (416) the way
// real stores do. It records every request.
type fakeS3 struct {
	mu       sync.Mutex
	objects  map[string]fakeObject // "bucket/key"
	reqs     []fakeReq
	delay    time.Duration // before answering a GET of an object
	ignoreIf bool          // drop If-Match (a store that ignores it)
	pageSize int
	// stall, when set, holds every GET's body after stallAfter bytes until
	// it is closed.
	stall      chan struct{}
	stallAfter int
	// hostile, when set, may take over a request: it returns true when it
	// answered (or stalled) it itself.
	hostile func(w http.ResponseWriter, r *http.Request, n int) bool
	// listExtra, when set, changes every listing page.
	listExtra func(res *listResult)

	inFlight, maxInFlight atomic.Int64
}

type fakeObject struct {
	data []byte
	etag string
	mod  time.Time
}

type fakeReq struct {
	method, path, rng string
	status            int
}

func newFake(t *testing.T) (*fakeS3, *httptest.Server) {
	f := &fakeS3{objects: map[string]fakeObject{}, pageSize: 1000}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeS3) put(bucketKey string, data []byte) {
	sum := md5.Sum(data)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objects[bucketKey] = fakeObject{data: data, etag: `"` + hex.EncodeToString(sum[:]) + `"`,
		mod: time.Now().Truncate(time.Second)}
}

// requests returns the recorded requests of one method to object paths.
func (f *fakeS3) requests(method string) []fakeReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeReq
	for _, r := range f.reqs {
		if r.method == method {
			out = append(out, r)
		}
	}
	return out
}

// statusWriter records the status in the request log before the client
// can see it.
type statusWriter struct {
	http.ResponseWriter
	f *fakeS3
	i int
}

func (w *statusWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *statusWriter) WriteHeader(s int) {
	w.f.mu.Lock()
	w.f.reqs[w.i].status = s
	w.f.mu.Unlock()
	w.ResponseWriter.WriteHeader(s)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	sw := &statusWriter{ResponseWriter: w, f: f, i: len(f.reqs)}
	f.reqs = append(f.reqs, fakeReq{method: r.Method, path: r.URL.Path, rng: r.Header.Get("Range")})
	hostile, n := f.hostile, len(f.reqs)
	f.mu.Unlock()
	if hostile != nil && hostile(sw, r, n) {
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(p, "/")
	if r.URL.Query().Get("list-type") == "2" {
		f.list(sw, bucket, r)
		return
	}
	if r.Method == http.MethodPut {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			sw.WriteHeader(http.StatusBadRequest)
			return
		}
		f.put(p, data)
		sw.WriteHeader(http.StatusOK)
		return
	}
	f.mu.Lock()
	obj, ok := f.objects[p]
	ignore := f.ignoreIf
	f.mu.Unlock()
	if !ok {
		sw.WriteHeader(http.StatusNotFound)
		if r.Method == http.MethodGet {
			sw.Write([]byte(`<Error><Code>NoSuchKey</Code><Message>no</Message><Key>` + key + `</Key></Error>`))
		}
		return
	}
	if r.Method == http.MethodGet {
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for {
			m := f.maxInFlight.Load()
			if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(f.delay)
	}
	if ignore {
		r.Header.Del("If-Match")
	}
	sw.Header().Set("ETag", obj.etag)
	var out http.ResponseWriter = sw
	if f.stall != nil && r.Method == http.MethodGet {
		out = &stallWriter{statusWriter: sw, after: f.stallAfter, stall: f.stall}
	}
	http.ServeContent(out, r, key, obj.mod, bytes.NewReader(obj.data))
}

// stallWriter sends the first after bytes of a body, then waits for stall
// to be closed before it sends the rest.
type stallWriter struct {
	*statusWriter
	after int
	stall chan struct{}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if w.after < 0 {
		return w.statusWriter.Write(p)
	}
	k := min(len(p), w.after)
	n, err := w.statusWriter.Write(p[:k])
	w.after -= n
	if err != nil || w.after > 0 {
		return n, err
	}
	w.after = -1 // stalled once
	w.ResponseWriter.(http.Flusher).Flush()
	<-w.stall
	m, err := w.statusWriter.Write(p[n:])
	return n + m, err
}

type listResult struct {
	XMLName               xml.Name      `xml:"ListBucketResult"`
	Name                  string        `xml:"Name"`
	Prefix                string        `xml:"Prefix"`
	KeyCount              int           `xml:"KeyCount"`
	MaxKeys               int           `xml:"MaxKeys"`
	IsTruncated           bool          `xml:"IsTruncated"`
	NextContinuationToken string        `xml:"NextContinuationToken,omitempty"`
	Contents              []listContent `xml:"Contents"`
	CommonPrefixes        []listCPrefix `xml:"CommonPrefixes"`
}

type listContent struct {
	Key          string `xml:"Key"`
	Size         int64  `xml:"Size"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
}

type listCPrefix struct {
	Prefix string `xml:"Prefix"`
}

// list answers ListObjectsV2 with delimiter, max-keys and continuation (the
// token is the last name returned).
func (f *fakeS3) list(w http.ResponseWriter, bucket string, r *http.Request) {
	q := r.URL.Query()
	prefix, delim, after := q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token")
	max := f.pageSize
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m < max {
		max = m
	}
	f.mu.Lock()
	type ent struct {
		name string
		obj  *fakeObject
	}
	seen := map[string]bool{}
	var ents []ent
	for bk, o := range f.objects {
		b, k, _ := strings.Cut(bk, "/")
		if b != bucket || !strings.HasPrefix(k, prefix) {
			continue
		}
		rest := k[len(prefix):]
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			cp := prefix + rest[:i+len(delim)]
			if !seen[cp] {
				seen[cp] = true
				ents = append(ents, ent{name: cp})
			}
			continue
		}
		o := o
		ents = append(ents, ent{name: k, obj: &o})
	}
	f.mu.Unlock()
	sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
	res := listResult{Name: bucket, Prefix: prefix, MaxKeys: max}
	for _, e := range ents {
		if e.name <= after {
			continue
		}
		if res.KeyCount == max {
			res.IsTruncated = true
			break
		}
		res.KeyCount++
		res.NextContinuationToken = e.name
		if e.obj == nil {
			res.CommonPrefixes = append(res.CommonPrefixes, listCPrefix{Prefix: e.name})
		} else {
			res.Contents = append(res.Contents, listContent{Key: e.name, Size: int64(len(e.obj.data)),
				LastModified: e.obj.mod.UTC().Format("2006-01-02T15:04:05.000Z"), ETag: e.obj.etag})
		}
	}
	if !res.IsTruncated {
		res.NextContinuationToken = ""
	}
	f.mu.Lock()
	extra := f.listExtra
	f.mu.Unlock()
	if extra != nil {
		extra(&res)
	}
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

// testClient is a client of srv with static credentials.
func testClient(t *testing.T, srv *httptest.Server, o Options) *Client {
	t.Helper()
	o.Endpoint = srv.URL
	o.Credentials = credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")
	o.Region = "us-east-1"
	c, err := NewClient(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pattern is n deterministic, position-dependent bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31>>7) ^ byte(i) ^ seed
	}
	return b
}

// parseRange reads "bytes=a-b".
func parseRange(t *testing.T, s string) (int64, int64) {
	t.Helper()
	a, b, ok := strings.Cut(strings.TrimPrefix(s, "bytes="), "-")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("range %q", s)
	}
	return lo, hi
}

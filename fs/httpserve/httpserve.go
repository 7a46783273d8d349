// Package httpserve serves an fs.Tree over plain HTTP, read-only: files
// for scripts (curl, wget -r), listings as JSON, and a small browse page a
// person can use, with no JavaScript.
//
// For every path of the tree (names resolve one at a time from the root
// with the tree's Lookup; "..", ".", NUL and backslashes are refused):
//
//   - GET (or HEAD) of a file returns its bytes, with Range requests,
//     ETag and Last-Modified from the entry's identity and, on a followed
//     tree, the change stamps of its record directory (fs/serve.Stamps).
//   - GET of a directory returns its listing: JSON when the query has
//     "json" or the request accepts application/json (name, type, size,
//     and for records their number and offset in the file, with the
//     damaged ranges of the record file; "offset" and "limit" page it); the
//     browse page when the request accepts text/html (a browser); else a
//     plain HTML index of every entry, as http.FileServer writes one, for
//     wget -r. A directory path without its final slash is redirected to
//     it, so that relative links work.
//   - "?view" on a file shows the browse page of that file: a record as
//     text, as a hex dump, and through a decoder (Options.Decoders), with
//     links to the records before and after it.
//   - "?search=RE" on a directory (or a file) runs the search grep -rE
//     would run over what a mount shows below it — records, .recfs,
//     trailer items, passed-through files — and streams the hits as they
//     are found (path, line number, line), as HTML to a browser and as
//     grep's text to anyone else; "fixed" matches RE as a plain string,
//     "icase" ignores case, "decoded" searches the records through the
//     decoder instead of their bytes, and "max" bounds the hits.
//
// Every other method is refused (fs/serve.ReadOnly): 403 with the reason
// for those that would change the tree.
package httpserve

import (
	"context"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// Defaults of a Handler.
const (
	DefaultPageSize   = 500  // entries on one browse page
	DefaultSearchHits = 1000 // hits a search stops after
	maxPageSize       = 10000
)

// Options configure a [Handler].
type Options struct {
	// Stamps are the change stamps of a followed tree (nil: not followed).
	Stamps *serve.Stamps
	// Decoders, if not nil, renders records on the browse page and for
	// decoded searches (typically the plan of --decode auto over a tree
	// that serves raw records). Env, if not nil, describes a record file
	// (its path in the tree's source, and its format) to the decoder.
	Decoders *decoders.Plan
	Env      func(path string, format string) decode.Env
	// PageSize is the number of entries of a browse page (0:
	// DefaultPageSize).
	PageSize int
	// Logger receives the handler's errors (nil: logrus's standard
	// logger). Tree errors are logged once by the tree.
	Logger logrus.FieldLogger
}

// Handler serves one tree over HTTP.
type Handler struct {
	t   *fs.Tree
	r   *serve.Resolver
	o   Options
	dec *sessions
}

// New returns the HTTP handler of t, rooted at the URL path "/". It keeps
// the names it looked up (see fs/serve.Resolver) until Close.
func New(t *fs.Tree, o Options) *Handler {
	if o.Logger == nil {
		o.Logger = logrus.StandardLogger()
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	h := &Handler{t: t, r: serve.NewResolver(t, 0, 0), o: o}
	h.dec = newSessions(h)
	return h
}

// Close drops what the handler keeps of the tree (call it before closing
// the tree).
func (h *Handler) Close() { h.r.Close() }

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	serve.ReadOnly(http.HandlerFunc(h.serve), http.MethodGet, http.MethodHead).ServeHTTP(w, r)
}

// entry is a resolved request path.
type entry struct {
	names     []string
	n, parent fs.Node
	a         fs.Attr
	stamp     serve.Stamp
}

// path returns the entry's URL path (directories end with a slash).
func (e *entry) path() string {
	p := "/" + strings.Join(e.names, "/")
	if e.n.IsDir() && p != "/" {
		p += "/"
	}
	return p
}

// name returns the entry's name ("/" for the root).
func (e *entry) name() string {
	if len(e.names) == 0 {
		return "/"
	}
	return e.names[len(e.names)-1]
}

// resolve finds the entry at the request path p.
func (h *Handler) resolve(ctx context.Context, p string) (*entry, error) {
	names, err := serve.Split(p)
	if err != nil {
		return nil, err
	}
	e := &entry{names: names}
	err = h.r.Do(ctx, names, func(n, parent fs.Node) error {
		a, st, err := h.o.Stamps.Attr(ctx, h.t, n, parent)
		e.n, e.parent, e.a, e.stamp = n, parent, a, st
		return err
	})
	return e, err
}

// fail answers an error of the tree.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	status := serve.HTTPStatus(h.t, err)
	http.Error(w, http.StatusText(status), status)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	e, err := h.resolve(r.Context(), r.URL.Path)
	if err != nil {
		h.fail(w, err)
		return
	}
	q := r.URL.Query()
	switch {
	case q.Has("search"):
		h.search(w, r, e)
	case e.n.IsDir() && !strings.HasSuffix(r.URL.Path, "/"):
		u := *r.URL
		u.Path = e.path()
		http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
	case e.n.IsDir() && wantsJSON(r):
		h.listJSON(w, r, e)
	case e.n.IsDir() && wantsHTML(r):
		h.browseDir(w, r, e)
	case e.n.IsDir():
		h.index(w, r, e)
	case q.Has("view"):
		h.browseFile(w, r, e)
	default:
		h.file(w, r, e)
	}
}

// wantsJSON reports whether the request asks for JSON.
func wantsJSON(r *http.Request) bool {
	return r.URL.Query().Has("json") || acceptsType(r, "application/json")
}

// wantsHTML reports whether the request comes from a browser.
func wantsHTML(r *http.Request) bool { return acceptsType(r, "text/html") }

// acceptsType reports whether the Accept header names typ.
func acceptsType(r *http.Request, typ string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == typ {
			return true
		}
	}
	return false
}

// file serves a file's bytes.
func (h *Handler) file(w http.ResponseWriter, r *http.Request, e *entry) {
	f, err := h.t.Open(r.Context(), e.n)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer f.Close()
	w.Header().Set("ETag", serve.ETag(e.a, e.stamp))
	w.Header().Set("Content-Type", contentType(e))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, e.name(), e.a.Mtime, &reader{t: h.t, rs: io.NewSectionReader(withContext(r.Context(), f), 0, e.a.Size)})
}

// contentType returns the media type of a file: text for .recfs and
// .recfs-summary, the extension's type for a passed-through file, bytes
// for records.
func contentType(e *entry) string {
	switch e.n.Kind {
	case fs.KindInfo, fs.KindSummary:
		return "text/plain; charset=utf-8"
	case fs.KindFile:
		if t := mime.TypeByExtension(path.Ext(e.name())); t != "" {
			return t
		}
	}
	return "application/octet-stream"
}

// reader reads a file for ServeContent and logs a failed read once: the
// response is then cut short, never completed with other bytes.
type reader struct {
	t  *fs.Tree
	rs *io.SectionReader
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.rs.Read(p)
	if err != nil && err != io.EOF {
		r.t.Report(err)
	}
	return n, err
}

func (r *reader) Seek(off int64, whence int) (int64, error) { return r.rs.Seek(off, whence) }

// withContext returns f read with ctx (fs.ReadHandle): a record's read
// stops when the request is given up (its client gone), where the source
// can stop it, instead of running on for no one.
func withContext(ctx context.Context, f io.ReaderAt) io.ReaderAt { return contextReader{ctx, f} }

// contextReader is withContext's reader.
type contextReader struct {
	ctx context.Context
	f   io.ReaderAt
}

func (c contextReader) ReadAt(p []byte, off int64) (int, error) {
	return fs.ReadHandle(c.ctx, c.f, p, off)
}

// httpTime formats t for a page.
func httpTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/recfs/recfs/fs"
)

// searchArgs are the query of a search.
type searchArgs struct {
	Pattern               string
	Fixed, Icase, Decoded bool
	Max                   int
}

// maxLine bounds the part of a line a search matches and shows.
const maxLine = 64 << 10

func parseSearch(r *http.Request) (searchArgs, *regexp.Regexp, error) {
	q := r.URL.Query()
	a := searchArgs{Pattern: q.Get("search"), Fixed: q.Get("fixed") != "", Icase: q.Get("icase") != "", Decoded: q.Get("decoded") != "", Max: DefaultSearchHits}
	if m, err := strconv.Atoi(q.Get("max")); err == nil && m > 0 {
		a.Max = m
	}
	expr := a.Pattern
	if a.Fixed {
		expr = regexp.QuoteMeta(expr)
	}
	if a.Icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	return a, re, err
}

// hit is one line found.
type hit struct {
	Path, Href           string
	Line                 int
	Before, Match, After string
}

// searcher walks a subtree and writes what matches.
type searcher struct {
	h    *Handler
	ctx  context.Context
	re   *regexp.Regexp
	args searchArgs
	html bool
	w    *bufio.Writer
	rc   *http.ResponseController
	hits int
	buf  *bufio.Reader
}

// search answers "?search=": grep -rE over the subtree at e, streamed.
func (h *Handler) search(w http.ResponseWriter, r *http.Request, e *entry) {
	args, re, err := parseSearch(r)
	if err != nil {
		http.Error(w, "bad pattern: "+err.Error(), http.StatusBadRequest)
		return
	}
	s := &searcher{h: h, ctx: r.Context(), re: re, args: args, html: wantsHTML(r), rc: http.NewResponseController(w)}
	if s.html {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s.w = bufio.NewWriterSize(w, 16<<10)
	if s.html {
		p := h.pageOf(e)
		p.Title, p.Search = "search "+args.Pattern, args
		pages().ExecuteTemplate(s.w, "searchhead", p)
		s.flush()
	}
	s.walk(e.n, e.parent, e.names)
	done := fmt.Sprintf("%d hit(s)", s.hits)
	switch {
	case s.hits >= args.Max:
		done += fmt.Sprintf(", stopped at %d", args.Max)
	case s.ctx.Err() != nil:
		done += ", stopped"
	}
	if s.html {
		pages().ExecuteTemplate(s.w, "searchfoot", done)
	}
	s.w.Flush()
}

func (s *searcher) flush() {
	s.w.Flush()
	_ = s.rc.Flush()
}

// done reports whether the search must stop.
func (s *searcher) done() bool { return s.hits >= s.args.Max || s.ctx.Err() != nil }

// walk searches the entry n (at names; parent is its directory).
func (s *searcher) walk(n, parent fs.Node, names []string) {
	if s.done() {
		return
	}
	if !n.IsDir() {
		s.file(n, parent, names)
		return
	}
	d, err := s.h.t.OpenDir(s.ctx, n)
	if err != nil {
		s.h.t.Report(err)
		return
	}
	defer d.Close()
	for !s.done() {
		de, ok := d.Next()
		if !ok {
			return
		}
		c, isRec := d.Record(de)
		if !isRec {
			if c, err = s.h.r.Lookup(s.ctx, n, de.Name); err != nil {
				continue
			}
		}
		s.walk(c, n, append(names[:len(names):len(names)], de.Name))
	}
}

// file searches one file: a record through the decoder when asked, else
// the bytes the tree serves.
func (s *searcher) file(n, parent fs.Node, names []string) {
	var r io.Reader
	if s.args.Decoded && n.Kind == fs.KindRecord {
		d, err := s.h.t.OpenDir(s.ctx, parent)
		if err != nil {
			return
		}
		count := d.Records()
		d.Close()
		ss := s.h.dec.get(s.ctx, parent, count, s.h.sourcePath(strings.Join(names[:len(names)-1], "/")))
		if ss != nil {
			text, _, err := ss.render(s.ctx, n.N)
			if err != nil {
				return // not decodable: nothing to find in its decoding
			}
			r = bytes.NewReader(text)
		}
	}
	if r == nil {
		a, err := s.h.t.Getattr(s.ctx, n)
		if err != nil {
			s.h.t.Report(err)
			return
		}
		f, err := s.h.t.Open(s.ctx, n)
		if err != nil {
			s.h.t.Report(err)
			return
		}
		defer f.Close()
		r = io.NewSectionReader(withContext(s.ctx, f), 0, a.Size)
	}
	if s.buf == nil {
		s.buf = bufio.NewReaderSize(r, maxLine)
	} else {
		s.buf.Reset(r)
	}
	s.lines(names)
}

// lines matches the lines of s.buf, as grep does: a file with a NUL byte
// is binary, and one match in it is reported once.
func (s *searcher) lines(names []string) {
	p := strings.Join(names, "/")
	line := 0
	binary := false
	for !s.done() {
		b, err := s.buf.ReadSlice('\n')
		if len(b) == 0 && err != nil {
			return
		}
		line++
		if bytes.IndexByte(b, 0) >= 0 {
			binary = true
		}
		text := bytes.TrimSuffix(b, []byte("\n"))
		if loc := s.re.FindIndex(text); loc != nil {
			if binary {
				s.binaryHit(p, names)
				return
			}
			s.hit(p, names, line, text, loc)
		}
		if err == bufio.ErrBufferFull {
			// The rest of a long line: skip it.
			for err == bufio.ErrBufferFull {
				_, err = s.buf.ReadSlice('\n')
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// href returns the link of the file at names.
func (s *searcher) href(names []string) string {
	return (&url.URL{Path: "/" + strings.Join(names, "/")}).EscapedPath() + "?view"
}

func (s *searcher) hit(p string, names []string, line int, text []byte, loc []int) {
	s.hits++
	if !s.html {
		fmt.Fprintf(s.w, "%s:%d:%s\n", p, line, text)
	} else {
		pages().ExecuteTemplate(s.w, "hit", hit{Path: p, Href: s.href(names), Line: line,
			Before: escapeText(text[:loc[0]]), Match: escapeText(text[loc[0]:loc[1]]), After: escapeText(text[loc[1]:])})
	}
	s.flush()
}

func (s *searcher) binaryHit(p string, names []string) {
	s.hits++
	if !s.html {
		fmt.Fprintf(s.w, "Binary file %s matches\n", p)
	} else {
		pages().ExecuteTemplate(s.w, "hit", hit{Path: p, Href: s.href(names), Line: 0, Before: "binary file matches"})
	}
	s.flush()
}

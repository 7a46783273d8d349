package httpserve

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/recfs/recfs/fs"
)

// The browse pages: plain HTML a person reads in a browser, no script.

// Bounds of what a file page shows.
const (
	textShown    = 64 << 10
	hexShown     = 16 << 10
	decodedShown = 256 << 10
)

// crumb is one link of a page's path.
type crumb struct{ Name, Href string }

// pageData is what every page shows.
type pageData struct {
	Title   string
	Crumbs  []crumb
	DirHref string // where the search box searches
	Search  searchArgs
}

func (h *Handler) pageOf(e *entry) pageData {
	p := pageData{Title: e.path(), Crumbs: []crumb{{"/", "/"}}}
	for i, n := range e.names {
		href := "/" + strings.Join(e.names[:i+1], "/")
		if i < len(e.names)-1 || e.n.IsDir() {
			href += "/"
		}
		p.Crumbs = append(p.Crumbs, crumb{n, (&url.URL{Path: href}).EscapedPath()})
	}
	dir := e.names
	if !e.n.IsDir() && len(dir) > 0 {
		dir = dir[:len(dir)-1]
	}
	d := "/" + strings.Join(dir, "/")
	if d != "/" {
		d += "/"
	}
	p.DirHref = (&url.URL{Path: d}).EscapedPath()
	return p
}

// row is one line of a directory page: an entry or a damaged range.
type row struct {
	item
	Href, ViewHref string
	Damage         *damage
}

type dirPage struct {
	pageData
	Kind        string
	Info        [][2]string
	Damage      []damage
	Rows        []row
	Total       uint64
	From, To    int64
	First, Prev string
	Next, Last  string
	Err         string
}

// browseDir writes the browse page of the directory e: a page of its
// entries, and for a record directory what .recfs says, with its damaged
// ranges marked where they fall between records.
func (h *Handler) browseDir(w http.ResponseWriter, r *http.Request, e *entry) {
	ctx := r.Context()
	from, limit := pageArgs(r, h.o.PageSize)
	limit = min(max(limit, 1), maxPageSize)
	p := dirPage{pageData: h.pageOf(e), Kind: dirType(e.n), From: from + 1}
	var in *recInfo
	if e.n.Kind == fs.KindRecordDir {
		if i, err := h.info(ctx, e.n); err == nil {
			in = i
			p.Info, p.Damage = i.fields, i.damage
		}
	}
	prevOff := int64(-1)
	if in != nil && from > 0 {
		if off, ok := h.recordOffset(ctx, e.n.Record(from-1)); ok {
			prevOff = off
		}
	}
	pending := damagesAfter(in, prevOff)
	total, err := h.each(ctx, e, from, limit, func(it item, c fs.Node) bool {
		if it.Offset != nil {
			for len(pending) > 0 && pending[0].Offset < *it.Offset {
				p.Rows = append(p.Rows, row{Damage: &pending[0]})
				pending = pending[1:]
			}
		}
		esc := (&url.URL{Path: it.Name}).EscapedPath()
		rw := row{item: it, Href: esc}
		switch {
		case it.Type != "file":
			rw.Href += "/"
		default:
			rw.ViewHref = esc + "?view"
		}
		p.Rows = append(p.Rows, rw)
		return true
	})
	if err != nil {
		p.Err = err.Error()
	}
	p.Total = total
	p.To = from + int64(limit)
	if p.To >= int64(total) {
		p.To = int64(total)
		for i := range pending { // the damage after the last record
			p.Rows = append(p.Rows, row{Damage: &pending[i]})
		}
	}
	link := func(off int64) string { return fmt.Sprintf("?offset=%d&limit=%d", off, limit) }
	if from > 0 {
		p.First, p.Prev = link(0), link(max(0, from-int64(limit)))
	}
	if p.To < int64(total) {
		p.Next, p.Last = link(p.To), link((int64(total)-1)/int64(limit)*int64(limit))
	}
	h.render(w, "dir", p)
}

// damagesAfter returns the damaged ranges of in at or after off.
func damagesAfter(in *recInfo, off int64) []damage {
	if in == nil {
		return nil
	}
	var out []damage
	for _, d := range in.damage {
		if d.Offset >= off {
			out = append(out, d)
		}
	}
	return out
}

type filePage struct {
	pageData
	Name, Kind         string
	Size               int64
	Record             int64
	IsRecord           bool
	Offset             string
	RawHref            string
	PrevHref, NextHref string
	Text               string
	TextCut            bool
	Hex                string
	HexAt, HexMore     string
	Decoder            string
	Decoded            string
	DecodedCut         bool
	DecodeErr          string
}

// browseFile writes the browse page of the file e: its text, a hex dump,
// and for a record its rendering by the decoder.
func (h *Handler) browseFile(w http.ResponseWriter, r *http.Request, e *entry) {
	ctx := r.Context()
	p := filePage{pageData: h.pageOf(e), Name: e.name(), Size: e.a.Size, Kind: kindName(e.n.Kind)}
	p.RawHref = (&url.URL{Path: e.name()}).EscapedPath()
	f, err := h.t.Open(ctx, e.n)
	if err != nil {
		h.fail(w, err)
		return
	}
	defer f.Close()
	head := make([]byte, min(e.a.Size, textShown))
	k, err := fs.ReadHandle(ctx, f, head, 0)
	if err != nil && err != io.EOF {
		h.fail(w, err)
		return
	}
	head = head[:k]
	p.Text, p.TextCut = escapeText(head), e.a.Size > int64(len(head))
	at, _ := strconv.ParseInt(r.URL.Query().Get("at"), 10, 64)
	at = max(0, min(at, e.a.Size)) &^ 15
	hb := make([]byte, min(e.a.Size-at, hexShown))
	k, err = fs.ReadHandle(ctx, f, hb, at)
	if err != nil && err != io.EOF {
		h.fail(w, err)
		return
	}
	p.Hex = hexDump(hb[:k], at)
	if at+int64(k) < e.a.Size {
		p.HexMore = fmt.Sprintf("?view&at=%d", at+int64(k))
	}
	if at > 0 {
		p.HexAt = fmt.Sprint(at)
	}
	if e.n.Kind == fs.KindRecord {
		h.recordPane(ctx, &p, e)
	}
	h.render(w, "file", p)
}

// recordPane fills the record's part of a file page: its number, offset,
// neighbours and rendering.
func (h *Handler) recordPane(ctx context.Context, p *filePage, e *entry) {
	p.IsRecord, p.Record = true, e.n.N
	if off, ok := h.recordOffset(ctx, e.n); ok {
		p.Offset = fmt.Sprint(off)
	}
	d, err := h.t.OpenDir(ctx, e.parent)
	if err != nil {
		return
	}
	count := d.Records()
	d.Close()
	if e.n.N > 0 {
		p.PrevHref = fs.RecordName(e.n.N-1, count) + "?view"
	}
	if e.n.N+1 < count {
		p.NextHref = fs.RecordName(e.n.N+1, count) + "?view"
	}
	dirPath := strings.Join(e.names[:len(e.names)-1], "/")
	s := h.dec.get(ctx, e.parent, count, h.sourcePath(dirPath))
	if s == nil {
		return
	}
	text, name, err := s.render(ctx, e.n.N)
	p.Decoder = name
	if err != nil {
		p.DecodeErr = err.Error()
	}
	p.Decoded, p.DecodedCut = escapeText(text[:min(len(text), decodedShown)]), len(text) > decodedShown
}

// sourcePath returns the source path of the entry at the tree path rel.
func (h *Handler) sourcePath(rel string) string {
	if rel == "" {
		return h.t.Origin()
	}
	return path.Join(h.t.Origin(), rel)
}

// kindName names an entry's kind on a page.
func kindName(k fs.Kind) string {
	switch k {
	case fs.KindRecord:
		return "record"
	case fs.KindInfo:
		return "record file description (.recfs)"
	case fs.KindSummary:
		return "decoder summary"
	case fs.KindTrailer:
		return "trailer"
	}
	return "file"
}

// escapeText shows bytes as text: valid UTF-8 as it is (but for control
// characters other than tab and newline), anything else as \xNN.
func escapeText(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		default:
			sb.WriteRune(r)
		}
		b = b[n:]
	}
	return sb.String()
}

// hexDump renders b, found at offset at, as hexdump -C does.
func hexDump(b []byte, at int64) string {
	var sb bytes.Buffer
	for i := 0; i < len(b); i += 16 {
		line := b[i:min(i+16, len(b))]
		fmt.Fprintf(&sb, "%08x  ", at+int64(i))
		for j := 0; j < 16; j++ {
			if j < len(line) {
				fmt.Fprintf(&sb, "%02x ", line[j])
			} else {
				sb.WriteString("   ")
			}
			if j == 7 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			sb.WriteByte(c)
		}
		sb.WriteString("|\n")
	}
	return sb.String()
}

// render executes a page template.
func (h *Handler) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := pages().ExecuteTemplate(w, name, data); err != nil {
		h.o.Logger.WithError(err).Debug("httpserve: page")
	}
}

var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Parse(pageTemplates))
})

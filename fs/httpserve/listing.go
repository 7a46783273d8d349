package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/recfs/recfs/fs"
)

// item is one entry of a listing, as JSON shows it.
type item struct {
	Name   string `json:"name"`
	Type   string `json:"type"` // "dir", "records" (a record file shown as a directory) or "file"
	Size   int64  `json:"size"`
	Record *int64 `json:"record,omitempty"` // records: the record's number
	Offset *int64 `json:"offset,omitempty"` // records: where its framing starts in the record file
	Error  string `json:"error,omitempty"`  // why the entry's attributes could not be read
	Mtime  string `json:"mtime,omitempty"`
}

// each calls fn for the entries of the directory e from position from
// (0: the first), at most limit of them (<= 0: all), until fn returns
// false. It returns the number of entries of the directory.
func (h *Handler) each(ctx context.Context, e *entry, from int64, limit int, fn func(it item, c fs.Node) bool) (uint64, error) {
	d, err := h.t.OpenDir(ctx, e.n)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	total := d.Len()
	if from > 0 {
		if d.Seek(uint64(from)) != nil {
			return total, nil
		}
	}
	for i := 0; limit <= 0 || i < limit; i++ {
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		de, ok := d.Next()
		if !ok {
			break
		}
		it := item{Name: de.Name, Type: "file"}
		c, isRec := d.Record(de)
		if !isRec {
			if c, err = h.r.Lookup(ctx, e.n, de.Name); err != nil {
				continue // gone since the listing
			}
		}
		switch {
		case c.Kind == fs.KindRecordDir:
			it.Type = "records"
		case de.Mode&syscall.S_IFMT == syscall.S_IFDIR:
			it.Type = "dir"
		}
		a, _, err := h.o.Stamps.Attr(ctx, h.t, c, e.n)
		if err != nil {
			h.t.Report(err)
			it.Error = err.Error()
		} else {
			it.Size, it.Mtime = a.Size, httpTime(a.Mtime)
		}
		if isRec {
			n := c.N
			it.Record = &n
			if off, ok := h.recordOffset(ctx, c); ok {
				it.Offset = &off
			}
		}
		if !fn(it, c) {
			break
		}
	}
	return total, nil
}

// recordOffset returns the offset of a record in its file.
func (h *Handler) recordOffset(ctx context.Context, rec fs.Node) (int64, bool) {
	xs, err := h.t.Xattrs(ctx, rec)
	if err != nil {
		return 0, false
	}
	for _, x := range xs {
		if x.Name == "user.recfs.offset" {
			v, err := strconv.ParseInt(string(x.Value), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// pageArgs reads the offset and limit of a listing's query.
func pageArgs(r *http.Request, def int) (from int64, limit int) {
	q := r.URL.Query()
	from, _ = strconv.ParseInt(q.Get("offset"), 10, 64)
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil {
		limit = def
	}
	return max(from, 0), min(limit, maxPageSize*100)
}

// listJSON writes the JSON listing of the directory e, streamed: the
// directory's facts (for a record directory, what .recfs says and its
// damaged ranges), then its entries.
func (h *Handler) listJSON(w http.ResponseWriter, r *http.Request, e *entry) {
	ctx := r.Context()
	from, limit := pageArgs(r, 0)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", `W/`+strings.TrimPrefix(etagOfDir(e), "W/"))
	bw := bufio.NewWriterSize(w, 32<<10)
	defer bw.Flush()
	head := map[string]any{"path": e.path(), "type": dirType(e.n)}
	if e.n.Kind == fs.KindRecordDir {
		if in, err := h.info(ctx, e.n); err == nil {
			type kv struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			}
			fields := make([]kv, len(in.fields))
			for i, f := range in.fields {
				fields[i] = kv{f[0], f[1]}
			}
			head["info"], head["damage"] = fields, append([]damage{}, in.damage...)
		}
	}
	b, _ := json.Marshal(head)
	bw.Write(b[:len(b)-1]) // leave the object open for the entries
	bw.WriteString(`,"entries":[`)
	first := true
	total, err := h.each(ctx, e, from, limit, func(it item, _ fs.Node) bool {
		if !first {
			bw.WriteByte(',')
		}
		first = false
		b, _ := json.Marshal(it)
		bw.Write(b)
		return true
	})
	bw.WriteString("]")
	fmt.Fprintf(bw, `,"total":%d`, total)
	if err != nil {
		eb, _ := json.Marshal(err.Error())
		fmt.Fprintf(bw, `,"error":%s`, eb)
	}
	bw.WriteString("}\n")
}

// dirType names the kind of a directory for JSON.
func dirType(n fs.Node) string {
	switch n.Kind {
	case fs.KindRecordDir:
		return "records"
	case fs.KindTrailerDir:
		return "trailer"
	}
	return "dir"
}

// etagOfDir is a weak validator of a directory listing.
func etagOfDir(e *entry) string {
	return fmt.Sprintf(`W/"%x-%x-%x"`, e.a.Ino, e.a.Mtime.UnixNano(), e.stamp.Len)
}

// index writes the plain HTML index of the directory e, every entry, as
// http.FileServer does: what wget -r follows.
func (h *Handler) index(w http.ResponseWriter, r *http.Request, e *entry) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	defer bw.Flush()
	io.WriteString(bw, "<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n")
	h.each(r.Context(), e, 0, 0, func(it item, c fs.Node) bool {
		name := it.Name
		if it.Type != "file" {
			name += "/"
		}
		fmt.Fprintf(bw, "<a href=\"%s\">%s</a>\n", (&url.URL{Path: name}).EscapedPath(), html.EscapeString(name))
		return true
	})
	io.WriteString(bw, "</pre>\n")
}

package fs

import (
	"context"
	"fmt"
	iofs "io/fs"
	"strconv"
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/index"
)

// infoText returns the contents of rd's .recfs, built once.
func (t *Tree) infoText(rd *recDir, src Records) []byte {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.info == nil {
		rd.info = []byte(FormatInfo(rd.path, src))
	}
	return rd.info
}

// FormatInfo renders the text of a record directory's .recfs file: one
// "key: value" line per fact (the format's own facts after the flavour:
// a Kafka segment's batches, offsets, ...), header entries as "header.<key>: <value>",
// damaged ranges as "damage: offset=<n> length=<n> reason=<quoted>" and the
// stale tail of a recycled log (the end of the log, not damage) as
// "stale: offset=<n> length=<n> reason=<quoted>". Strings that could hold
// line breaks are quoted in Go syntax.
func FormatInfo(path string, src Records) string {
	in := src.Info()
	var b strings.Builder
	line := func(k string, v any) { fmt.Fprintf(&b, "%s: %v\n", k, v) }
	line("file", strconv.Quote(path))
	line("format", in.Format)
	if in.Flavor != "" {
		line("flavor", in.Flavor)
	}
	for _, f := range in.Facts {
		line(f.Name, f.Value)
	}
	line("records", src.Len())
	line("bytes", in.Bytes)
	line("file size", in.FileSize)
	for _, h := range src.Header() {
		line("header."+h.Key, headerValue(h))
	}
	if src.HasTrailer() {
		line("trailer", fmt.Sprintf("%d bytes", src.TrailerSize()))
	} else {
		line("trailer", "none")
	}
	if in.Loaded != "" {
		line("index", fmt.Sprintf("%s in %s", in.Loaded, index.FormatDuration(in.BuildTime)))
	}
	if in.CacheFile != "" {
		line("cache file", strconv.Quote(in.CacheFile))
	}
	var dmg, stale []codec.Damage
	for _, d := range src.Damage() {
		if d.Stale() {
			stale = append(stale, d)
		} else {
			dmg = append(dmg, d)
		}
	}
	if v, ok := src.(decodedView); ok {
		for i, l := range v.decodeInfo() {
			if i == 0 {
				line("decode", l)
			} else {
				line("decode summary", l)
			}
		}
		if v.decodedSizes() {
			line("sizes", "of the decoded text (ls -l, du -b); bytes and file size are of the source")
		}
	}
	line("damaged ranges", len(dmg))
	for _, d := range dmg {
		fmt.Fprintf(&b, "damage: offset=%d length=%d reason=%s\n", d.Off, d.Len, strconv.Quote(d.Reason))
	}
	for _, d := range stale {
		fmt.Fprintf(&b, "stale: offset=%d length=%d reason=%s\n", d.Off, d.Len, strconv.Quote(d.Reason))
	}
	return b.String()
}

// decodedView is a source shown through View.
type decodedView interface {
	decodeInfo() []string
	decodedSizes() bool
	hasSummary() bool
	summary() ([]byte, bool, error)
}

// summaryText returns the text of the summary node n of src.
func (t *Tree) summaryText(n Node, src Records) ([]byte, error) {
	v, ok := src.(decodedView)
	if !ok {
		return nil, iofs.ErrNotExist
	}
	text, ok, err := v.summary()
	if !ok {
		return nil, iofs.ErrNotExist
	}
	if err != nil {
		return nil, &OpError{Op: "summary", Path: n.rd.path, Name: n.Name(), Record: -1, Off: -1, Err: err}
	}
	return text, nil
}

// headerValue renders a header value: strings quoted, the rest as %v.
func headerValue(h index.HeaderEntry) string {
	if s, ok := h.Value.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(h.Value)
}

// Xattrs returns the extended attributes of n (spec: user.recfs.format,
// user.recfs.records and user.recfs.header.<key> on record directories;
// user.recfs.offset and user.recfs.length on records). A record's length
// is sized as Getattr sizes it, with ctx: for a --decode view that may
// render the record, and a render given up or failed is an error (EINTR
// when ctx was cancelled), never a length.
func (t *Tree) Xattrs(ctx context.Context, n Node) ([]Xattr, error) {
	var out []Xattr
	add := func(k string, v any) {
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		out = append(out, Xattr{Name: "user.recfs." + k, Value: []byte(s)})
	}
	switch n.Kind {
	case KindRecordDir:
		src, err := t.records(ctx, n.rd)
		if err != nil {
			return nil, err
		}
		add("format", src.Info().Format.String())
		add("records", src.Len())
		seen := map[string]bool{}
		for _, h := range src.Header() {
			if seen[h.Key] { // xattr names are unique: the first entry wins
				continue
			}
			seen[h.Key] = true
			add("header."+h.Key, h.Value)
		}
	case KindRecord:
		src, err := t.records(ctx, n.rd)
		if err != nil {
			return nil, err
		}
		if n.N < 0 || n.N >= src.Len() {
			return nil, nil
		}
		size, err := recordSize(ctx, src, n.N)
		if err != nil {
			return nil, &OpError{Op: "xattrs", Path: n.rd.path, Name: n.Name(), Record: n.N, Off: -1, Err: err}
		}
		add("offset", src.Offset(n.N))
		add("length", size)
	}
	return out, nil
}

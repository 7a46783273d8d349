package webdav

import (
	"bufio"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/fs/serve"
)

// maxPropfindBody bounds the body of a PROPFIND request.
const maxPropfindBody = 64 << 10

// propfindReq is a parsed PROPFIND body.
type propfindReq struct {
	propname bool
	allprop  bool
	props    []xml.Name // <prop> names, or <include> names with allprop
}

// errBadPropfind is the error of a PROPFIND body that is not one.
var errBadPropfind = errors.New("webdav: malformed PROPFIND body")

// parsePropfind reads a PROPFIND body: an empty body is allprop. The names
// of an <include> with <allprop> are read but, as x/net/webdav does for
// depth 0, not added: depth 0 and depth 1 answer alike.
func parsePropfind(r io.Reader) (propfindReq, error) {
	var req propfindReq
	d := xml.NewDecoder(r)
	depth, seen := 0, false
	var in string // the DAV: element of depth 1 being read
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !seen {
				return propfindReq{allprop: true}, nil
			}
			break
		}
		if err != nil {
			return propfindReq{}, errBadPropfind
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				if t.Name != (xml.Name{Space: "DAV:", Local: "propfind"}) {
					return propfindReq{}, errBadPropfind
				}
				seen = true
			case 2:
				if t.Name.Space != "DAV:" {
					return propfindReq{}, errBadPropfind
				}
				in = t.Name.Local
				switch in {
				case "propname":
					req.propname = true
				case "allprop":
					req.allprop = true
				case "prop", "include":
				default:
					return propfindReq{}, errBadPropfind
				}
			case 3:
				if in == "prop" || in == "include" {
					req.props = append(req.props, t.Name)
				}
			}
		case xml.EndElement:
			depth--
		}
	}
	n := 0
	for _, b := range []bool{req.propname, req.allprop, len(req.props) > 0 && !req.allprop} {
		if b {
			n++
		}
	}
	if n != 1 {
		return propfindReq{}, errBadPropfind
	}
	return req, nil
}

// live properties, as x/net/webdav serves them: which apply to
// directories (the others only to files). Properties it knows but hides
// (creationdate, getcontentlanguage, lockdiscovery) are not found.
var liveProps = []struct {
	name string
	dir  bool
}{
	{"resourcetype", true},
	{"displayname", true},
	{"getcontentlength", false},
	{"getlastmodified", true},
	{"getcontenttype", false},
	{"getetag", false},
	{"supportedlock", true},
}

// supportedLock is x/net/webdav's supportedlock value.
const supportedLock = `<D:lockentry xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>`

// propValue returns the inner XML of the live property name of fi, and
// whether fi has it.
func propValue(name string, fi *FileInfo, root bool) (string, bool) {
	dir := fi.IsDir()
	for _, p := range liveProps {
		if p.name != name {
			continue
		}
		if dir && !p.dir {
			return "", false
		}
		switch name {
		case "resourcetype":
			if dir {
				return `<D:collection xmlns:D="DAV:"/>`, true
			}
			return "", true
		case "displayname":
			if root {
				return "", true
			}
			return escape(fi.Name()), true
		case "getcontentlength":
			return strconv.FormatInt(fi.Size(), 10), true
		case "getlastmodified":
			return fi.ModTime().UTC().Format(http.TimeFormat), true
		case "getcontenttype":
			ct, _ := fi.ContentType(context.Background())
			return escape(ct), true
		case "getetag":
			et, _ := fi.ETag(context.Background())
			return escape(et), true
		case "supportedlock":
			return supportedLock, true
		}
	}
	return "", false
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// propfind answers a PROPFIND of depth 1: the entry itself, then, for a
// directory, one response per entry of the tree's directory stream,
// written as it is made.
func (h *Handler) propfind(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	e, err := h.fsy.lookup(ctx, r.URL.Path)
	if err != nil {
		status := serve.HTTPStatus(h.t, err)
		http.Error(w, http.StatusText(status), status)
		return
	}
	body := io.LimitReader(r.Body, maxPropfindBody+1)
	req, err := parsePropfind(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var d *fs.Dir
	if e.n.IsDir() {
		if d, err = h.t.OpenDir(ctx, e.n); err != nil {
			status := serve.HTTPStatus(h.t, err)
			http.Error(w, http.StatusText(status), status)
			return
		}
		defer d.Close()
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:">`)
	names, _ := serve.Split(r.URL.Path)
	base := "/" + strings.Join(names, "/")
	writeResponse(bw, base, e.info, len(names) == 0, req)
	if d != nil {
		for {
			de, ok := d.Next()
			if !ok {
				break
			}
			if ctx.Err() != nil {
				return // the client went away
			}
			href := path.Join(base, de.Name)
			c, err := h.fsy.r.Lookup(ctx, e.n, de.Name)
			var fi *FileInfo
			if err == nil {
				fi, err = h.fsy.info(ctx, c, e.n, de.Name)
			}
			if err != nil {
				if serve.NotFound(err) {
					continue // gone since the listing
				}
				status := serve.HTTPStatus(h.t, err)
				fmt.Fprintf(bw, "<D:response><D:href>%s</D:href><D:status>HTTP/1.1 %d %s</D:status></D:response>",
					hrefOf(href, de.Mode&syscall.S_IFMT == syscall.S_IFDIR), status, http.StatusText(status))
				continue
			}
			writeResponse(bw, href, fi, false, req)
		}
	}
	bw.WriteString("</D:multistatus>")
	bw.Flush()
}

// hrefOf escapes the path p for an href; directories end with a slash.
func hrefOf(p string, dir bool) string {
	if dir && p != "/" {
		p += "/"
	}
	return escape((&url.URL{Path: p}).EscapedPath())
}

// writeResponse writes the response element of the entry fi at p.
func writeResponse(bw *bufio.Writer, p string, fi *FileInfo, root bool, req propfindReq) {
	bw.WriteString("<D:response><D:href>")
	bw.WriteString(hrefOf(p, fi.IsDir()))
	bw.WriteString("</D:href>")
	var found, missing []xml.Name
	names := req.props
	if req.propname || req.allprop {
		names = nil
		for _, lp := range liveProps {
			if _, ok := propValue(lp.name, fi, root); ok {
				names = append(names, xml.Name{Space: "DAV:", Local: lp.name})
			}
		}
	}
	if req.propname {
		bw.WriteString("<D:propstat><D:prop>")
		for _, n := range names {
			writeEmpty(bw, n)
		}
		bw.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")
		return
	}
	for _, n := range names {
		if n.Space == "DAV:" {
			if _, ok := propValue(n.Local, fi, root); ok {
				found = append(found, n)
				continue
			}
		}
		missing = append(missing, n)
	}
	if len(found) > 0 || len(missing) == 0 {
		bw.WriteString("<D:propstat><D:prop>")
		for _, n := range found {
			v, _ := propValue(n.Local, fi, root)
			fmt.Fprintf(bw, "<D:%s>%s</D:%s>", n.Local, v, n.Local)
		}
		bw.WriteString("</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>")
	}
	if len(missing) > 0 {
		bw.WriteString("<D:propstat><D:prop>")
		for _, n := range missing {
			writeEmpty(bw, n)
		}
		bw.WriteString("</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>")
	}
	bw.WriteString("</D:response>")
}

// writeEmpty writes an empty element named n.
func writeEmpty(bw *bufio.Writer, n xml.Name) {
	if n.Space == "DAV:" {
		fmt.Fprintf(bw, "<D:%s/>", escape(n.Local))
		return
	}
	fmt.Fprintf(bw, `<R:%s xmlns:R="%s"/>`, escape(n.Local), escape(n.Space))
}

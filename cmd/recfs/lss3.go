package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"sync"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// `recfs ls s3://bucket/prefix/` reads the first bytes of each object for
// its format, detectWorkers objects at once, each in blocks of
// detectBlock: one ranged GET tells most formats (the leveldb and
// Prometheus probes look at four 32 KiB blocks). Sizes and the published
// indexes come from the listing itself (no HEAD per object).
const (
	detectWorkers = 8
	detectBlock   = 128 << 10
)

// lsPrefixJSON is one entry of `recfs ls --json s3://bucket/prefix/`.
type lsPrefixJSON struct {
	Name   string `json:"name"`
	Dir    bool   `json:"dir"`
	Size   int64  `json:"size"`
	Format string `json:"format"` // a record format, "other" or "dir"
	// Published tells whether the object has a published index
	// (NAME.recfs-idx, see `recfs index --publish`).
	Published bool `json:"published_index"`

	obj *s3.ListedObject
	fi  iofs.FileInfo
	err error // the format could not be read
}

// lsS3Prefix lists the objects and prefixes directly under a prefix URL,
// a list page at a time: format, size, published index and name, as
// lsLocalDir lists a directory.
func lsS3Prefix(cmd *cobra.Command, url string, asJSON bool) error {
	d, dc, err := openS3Prefix(cmd, url)
	if err != nil {
		return err
	}
	defer d.Close()
	bucket, _, _ := s3.ParseURL(url)
	w := bufio.NewWriter(cmd.OutOrStdout())
	p := &prefixPrinter{w: w, enc: json.NewEncoder(w), asJSON: asJSON, bucket: bucket, fails: failures{cmd: cmd}}
	for {
		ents, err := d.ReadDir(1000)
		rows := prefixRows(ents)
		detectFormats(cmd, dc, bucket, rows)
		if cerr := cmd.Context().Err(); cerr != nil {
			w.Flush()
			return cerr
		}
		if perr := p.print(rows); perr != nil {
			return perr
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			w.Flush()
			return fmt.Errorf("%s: %w", url, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return p.fails.result()
}

// openS3Prefix opens the listing of a prefix URL, and a client reading
// the first blocks of its objects for their formats.
func openS3Prefix(cmd *cobra.Command, url string) (iofs.ReadDirFile, *s3.Client, error) {
	o, err := s3ClientOptions(cmd)
	if err != nil {
		return nil, nil, err
	}
	fsys, err := open.PrefixFS(cmd.Context(), url, open.Options{S3: o})
	if err != nil {
		return nil, nil, err
	}
	o.BlockSize, o.CacheBytes = detectBlock, 4*detectBlock
	dc, err := s3.NewClient(cmd.Context(), o)
	if err != nil {
		return nil, nil, err
	}
	f, err := fsys.Open(".")
	if err != nil {
		return nil, nil, err
	}
	d, ok := f.(iofs.ReadDirFile)
	if !ok {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a prefix", url)
	}
	return d, dc, nil
}

// prefixRows are the rows of one list page, before format detection:
// prefixes as "dir", objects as "other" with their size and whether they
// have a published index.
func prefixRows(ents []iofs.DirEntry) []lsPrefixJSON {
	rows := make([]lsPrefixJSON, len(ents))
	for i, e := range ents {
		r := &rows[i]
		r.Name, r.Dir, r.Format = e.Name(), e.IsDir(), "dir"
		if fi, ierr := e.Info(); ierr == nil && !e.IsDir() {
			r.fi, r.Size, r.Format = fi, fi.Size(), "other"
			r.obj, _ = fi.Sys().(*s3.ListedObject)
			r.Published = r.obj != nil && r.obj.Sidecar
		}
	}
	return rows
}

// prefixPrinter writes the rows of `recfs ls s3://bucket/prefix/`, as
// text or JSON lines, counting the objects whose format could not be
// read.
type prefixPrinter struct {
	w      *bufio.Writer
	enc    *json.Encoder
	asJSON bool
	bucket string
	fails  failures
}

// print writes rows; it stops at a write error or when too many formats
// could not be read.
func (p *prefixPrinter) print(rows []lsPrefixJSON) error {
	for _, r := range rows {
		if r.err != nil {
			if ferr := p.fails.add("s3://"+p.bucket+"/"+r.obj.Key, fmt.Errorf("format: %w", r.err)); ferr != nil {
				p.w.Flush()
				return ferr
			}
		}
		if p.asJSON {
			if err := p.enc.Encode(r); err != nil {
				return err
			}
			continue
		}
		size, pub, name := fmt.Sprint(r.Size), "-", r.Name
		if r.Dir {
			size, name = "-", name+"/"
		} else if r.Published {
			pub = "published"
		}
		if _, err := fmt.Fprintf(p.w, "%-15s %12s  %-9s  %s\n", r.Format, size, pub, name); err != nil {
			return err
		}
	}
	return nil
}

// detectFormats sets the format of each listed object of rows from its
// first bytes, detectWorkers at a time; a read that fails sets err and
// format "?". An interrupted command stops the reads at once.
func detectFormats(cmd *cobra.Command, c *s3.Client, bucket string, rows []lsPrefixJSON) {
	ctx := cmd.Context()
	sem := make(chan struct{}, detectWorkers)
	var wg sync.WaitGroup
	for i := range rows {
		r := &rows[i]
		if r.obj == nil || r.Size == 0 {
			continue // a prefix, or an empty object: no format
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			obj := c.OpenListed(bucket, r.obj, r.Size, r.fi.ModTime())
			stop := context.AfterFunc(ctx, func() { obj.Close() })
			defer stop()
			defer obj.Close()
			format, err := index.Detect(obj, r.Size)
			switch {
			case err == nil:
				r.Format = format.String()
			case errors.Is(err, codec.ErrFormat):
			case ctx.Err() != nil:
				r.Format = "?"
			default:
				r.Format, r.err = "?", err
			}
		}()
	}
	wg.Wait()
}

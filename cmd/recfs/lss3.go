//go:build !recfs_lean

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/source/s3"
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

	key string // the object's key
	err error  // the format could not be read
}

// lsS3Prefix lists the objects and prefixes directly under a prefix URL,
// a list page at a time: format, size, published index and name, as
// lsLocalDir lists a directory.
func lsS3Prefix(cmd *cobra.Command, url string, asJSON bool) error {
	o, err := s3ClientOptions(cmd)
	if err != nil {
		return err
	}
	l, err := open.ListPrefix(cmd.Context(), url, open.Options{S3: o})
	if err != nil {
		return err
	}
	defer l.Close()
	bucket, _, _ := s3.ParseURL(url)
	w := bufio.NewWriter(cmd.OutOrStdout())
	p := &prefixPrinter{w: w, enc: json.NewEncoder(w), asJSON: asJSON, bucket: bucket, fails: failures{cmd: cmd}}
	for {
		ents, err := l.Next(cmd.Context(), 1000)
		if cerr := cmd.Context().Err(); cerr != nil {
			w.Flush()
			return cerr
		}
		if perr := p.print(prefixRows(ents)); perr != nil {
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

// prefixRows are the lines of one list page.
func prefixRows(ents []open.PrefixEntry) []lsPrefixJSON {
	rows := make([]lsPrefixJSON, len(ents))
	for i, e := range ents {
		rows[i] = lsPrefixJSON{Name: e.Name, Dir: e.Dir, Size: e.Size, Format: e.Format, Published: e.Published, key: e.Key, err: e.Err}
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
			if ferr := p.fails.add("s3://"+p.bucket+"/"+r.key, fmt.Errorf("format: %w", r.err)); ferr != nil {
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

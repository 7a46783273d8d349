//go:build !recfs_lean

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index/report"
	"github.com/recfs/recfs/source/s3"
)

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
	w := report.NewEntryWriter(cmd.OutOrStdout(), asJSON)
	p := &prefixPrinter{w: w, bucket: bucket, fails: failures{cmd: cmd}}
	for {
		ents, err := l.Next(cmd.Context(), 1000)
		if cerr := cmd.Context().Err(); cerr != nil {
			w.Flush()
			return cerr
		}
		if perr := p.print(ents); perr != nil {
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

// prefixPrinter writes the lines of `recfs ls s3://bucket/prefix/`,
// counting the objects whose format could not be read.
type prefixPrinter struct {
	w      *report.EntryWriter
	bucket string
	fails  failures
}

// print writes the lines of ents; it stops at a write error or when too
// many formats could not be read.
func (p *prefixPrinter) print(ents []open.PrefixEntry) error {
	for _, e := range ents {
		if e.Err != nil {
			if ferr := p.fails.add("s3://"+p.bucket+"/"+e.Key, fmt.Errorf("format: %w", e.Err)); ferr != nil {
				p.w.Flush()
				return ferr
			}
		}
		if err := p.w.Write(report.Entry{Name: e.Name, Dir: e.Dir, Size: e.Size, Format: e.Format, Published: &e.Published}); err != nil {
			return err
		}
	}
	return nil
}

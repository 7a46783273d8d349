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
// a list page at a time: format, size, published index and name, as ls
// lists a local directory. An object whose format could not be read
// is listed with "?" and reported as a failed operand.
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
	defer w.Flush()
	fails := failures{cmd: cmd}
	for {
		ents, err := l.Next(cmd.Context(), 1000)
		if cerr := cmd.Context().Err(); cerr != nil {
			return cerr
		}
		for _, e := range ents {
			if e.Err != nil {
				if ferr := fails.add("s3://"+bucket+"/"+e.Key, fmt.Errorf("format: %w", e.Err)); ferr != nil {
					return ferr
				}
			}
			if werr := w.Write(report.Entry{Name: e.Name, Dir: e.Dir, Size: e.Size, Format: e.Format, Published: &e.Published}); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return fails.result()
}

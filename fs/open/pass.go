package open

import (
	"context"
	"os"

	"github.com/recfs/recfs/index"
)

// PassFile is a one-pass reading of a local record file (index.Pass);
// Close closes the file.
type PassFile struct {
	*index.Pass
	f *os.File
}

// Close closes the file the pass reads.
func (p PassFile) Close() error { return p.f.Close() }

// Pass opens the local record file target for one pass over its records
// in file order, each read and checked once, with no table built (see
// index.NewPass): for cat of every record of a file. It fails with
// index.ErrNoPass for an object or a URL and for what NewPass refuses,
// and with the error of opening or detecting the file otherwise.
func Pass(ctx context.Context, target string, o Options) (PassFile, error) {
	if KindOf(target) != Local {
		return PassFile{}, index.ErrNoPass
	}
	f, fi, err := openRegular(target)
	if err != nil {
		return PassFile{}, err
	}
	p, err := index.NewPass(ctx, f, fi.Size(), indexOptions(target, o.Index))
	if err != nil {
		f.Close()
		return PassFile{}, err
	}
	return PassFile{Pass: p, f: f}, nil
}

// openRegular opens the local file at path for reading, refusing what is
// not a regular file (CheckRegular).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = CheckRegular(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

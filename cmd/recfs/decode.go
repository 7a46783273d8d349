package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// decodeFlags are --decode and the flags that give its decoder
// parameters.
type decodeFlags struct {
	mode      string
	manifest  string
	proto     []string
	protoPath []string
}

// decodeHelp is the --decode flag's usage line.
const decodeHelp = `show records decoded as text (see "Decoders" below): ` + "NAME[:ARG] or auto"

// decodersHelp lists the decoders for a command's long help.
func decodersHelp() string {
	return "Decoders (--decode):\n" + decoders.Help()
}

// addDecodeFlags registers --decode on cmd.
func addDecodeFlags(cmd *cobra.Command) *decodeFlags {
	f := &decodeFlags{}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "decode", decoders.ModeNone, decodeHelp)
	_ = cmd.RegisterFlagCompletionFunc("decode", fixedCompletion(decoders.Names()...))
	fl.StringVar(&f.manifest, "manifest", "", "with --decode batch: the MANIFEST that names the WAL's column families (default: the one beside the WAL)")
	fl.StringArrayVar(&f.proto, "proto", nil, "with --decode protobuf:MESSAGE: a .proto file or a descriptor set (protoc -o) defining MESSAGE (repeatable)")
	fl.StringArrayVar(&f.protoPath, "proto-path", nil, "with --proto: a directory to find imported .proto files in (repeatable; default: the directory of each --proto)")
	return f
}

// decoding reports whether --decode was given.
func (f *decodeFlags) decoding() bool { return f.mode != decoders.ModeNone }

// check checks the flags without preparing a decoder.
func (f *decodeFlags) check() error {
	if err := decoders.Check(f.mode); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), decoders.ErrUsage.Error()+": "))
	}
	return nil
}

// plan prepares the decoder the flags ask for; nil without --decode.
func (f *decodeFlags) plan(out decode.Output) (*decoders.Plan, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	// Absolute paths: a daemon or a later reopen reads them from elsewhere.
	abs := func(ps ...string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p
			if a, err := filepath.Abs(p); err == nil && p != "" && !s3.IsURL(p) {
				out[i] = a
			}
		}
		return out
	}
	p, err := decoders.Prepare(decoders.Spec{Mode: f.mode, Output: out, Params: decode.Params{
		Manifest: abs(f.manifest)[0], Proto: abs(f.proto...), ProtoPath: abs(f.protoPath...), Open: openFile, OpenRecords: openRecords}})
	if errors.Is(err, decoders.ErrUsage) {
		return nil, usagef("%s", err)
	}
	return p, err
}

// openFile opens a file named on the command line.
func openFile(path string) (io.ReadCloser, error) { return os.Open(path) }

// openRecords opens a record file named on the command line.
func openRecords(path string) (decode.RecordsCloser, error) {
	if s3.IsURL(path) {
		return nil, fmt.Errorf("%s: give a local file", path)
	}
	return index.Open(context.Background(), path, index.Options{CacheDir: "-"})
}

// decodeEnv describes the source at path (a file or an s3:// URL) to its
// decoder.
func decodeEnv(path string, src fs.Source) decode.Env {
	env := decode.Env{Path: path, Format: src.Info().Format}
	if !s3.IsURL(path) {
		env.Dir = localDir{dir: filepath.Dir(path)}
	}
	return env
}

// choice says which decoder the flags choose for the source at path, and
// why; "raw" when none.
func (f *decodeFlags) choice(src fs.Source, path string) (name, why string, err error) {
	plan, err := f.plan(decode.Output{})
	if err != nil {
		return "", "", err
	}
	s, why, err := plan.Open(src, decodeEnv(path, src))
	if err != nil || s == nil {
		return "raw", why, err
	}
	return s.Name(), s.Why(), nil
}

// viewSource wraps src, the source at path, in the view plan makes for
// it; src itself without a plan.
func viewSource(plan *decoders.Plan, src fs.Source, path string) (fs.Source, error) {
	if plan == nil {
		return src, nil
	}
	s, why, err := plan.Open(src, decodeEnv(path, src))
	if err != nil {
		return nil, err
	}
	return fs.View(src, s, why), nil
}

// localDir is the directory beside a local source, for its decoder: plain
// names only, symbolic links not followed. sub, when set, is a directory
// in dir (a Prometheus checkpoint), entered without following a link.
type localDir struct{ dir, sub string }

// plainName reports whether name names an entry of a directory.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// openDir opens the directory d is.
func (d localDir) openDir() (*os.File, error) {
	p, flags := d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC
	if d.sub != "" {
		p, flags = filepath.Join(d.dir, d.sub), flags|unix.O_NOFOLLOW
	}
	fd, err := unix.Open(p, flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// open opens name in the directory: a regular file, no symbolic link.
func (d localDir) open(name string) (*os.File, error) {
	if !plainName(name) {
		return nil, fmt.Errorf("%q: not a file name in %s", name, d.dir)
	}
	dir, err := d.openDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	p := filepath.Join(dir.Name(), name)
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", p)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Sub returns the directory name in d: one level, no symbolic link.
func (d localDir) Sub(name string) (decode.Dir, error) {
	if !plainName(name) || d.sub != "" {
		return nil, fmt.Errorf("%q: not a directory name in %s", name, d.dir)
	}
	s := localDir{dir: d.dir, sub: name}
	f, err := s.openDir()
	if err != nil {
		return nil, err
	}
	return s, f.Close()
}

// Names lists the directory.
func (d localDir) Names() ([]string, error) {
	f, err := d.openDir()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// ReadFile reads the small regular file name.
func (d localDir) ReadFile(name string, max int64) ([]byte, error) {
	f, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", f.Name(), max)
	}
	return b, err
}

// OpenRecords opens the record file name.
func (d localDir) OpenRecords(name string) (decode.RecordsCloser, error) {
	f, err := d.open(name)
	if err != nil {
		return nil, err
	}
	t, err := index.OpenFile(context.Background(), f, f.Name(), index.Options{CacheDir: "-"})
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

package recfsio

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	s3obj "github.com/recfs/recfs/source/s3"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&globFn{})
	register.Emitter1[string]()
}

// globFn expands a pattern into the record files it names.
type globFn struct {
	Opt Options
}

// ProcessElement emits every regular file (or object) pattern matches,
// sidecars left out; a pattern that matches nothing is an error.
func (fn *globFn) ProcessElement(ctx context.Context, pattern string, emit func(string)) error {
	m, err := glob(ctx, pattern, fn.Opt)
	if err != nil {
		return err
	}
	if len(m) == 0 {
		return fmt.Errorf("recfsio: %s: no files match", pattern)
	}
	for _, p := range m {
		emit(p)
	}
	return nil
}

// glob returns the files pattern matches, in order.
func glob(ctx context.Context, pattern string, o Options) ([]string, error) {
	if !s3obj.IsURL(pattern) {
		m, err := filepath.Glob(pattern)
		if err != nil {
			return nil, err
		}
		out := m[:0]
		for _, p := range m {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(p, s3obj.SidecarSuffix) {
				out = append(out, p)
			}
		}
		return out, nil
	}
	bucket, key, err := s3obj.ParseURL(pattern)
	if err != nil {
		return nil, err
	}
	if !strings.ContainsAny(key, `*?[\`) {
		return []string{pattern}, nil
	}
	c, err := s3Client(ctx, o.S3)
	if err != nil {
		return nil, err
	}
	fsys := c.FS(ctx, bucket, "").WithSidecars(s3obj.SidecarSuffix)
	m, err := fs.Glob(fsys, key)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m))
	for _, k := range m {
		if fi, err := fs.Stat(fsys, k); err == nil && !fi.IsDir() {
			out = append(out, "s3://"+bucket+"/"+k)
		}
	}
	sort.Strings(out)
	return out, nil
}

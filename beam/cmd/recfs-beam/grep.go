package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/recfs/recfs/beam/recfsio"
)

func init() {
	register.DoFn3x1[context.Context, recfsio.Record, func(string), error](&grepFn{})
	register.Emitter1[string]()
}

// grep returns the lines of the records whose bytes match pattern.
func grep(s beam.Scope, pattern string, recs beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("grep"), &grepFn{Pattern: pattern}, recs)
}

// grepFn keeps the records that match Pattern, as lines.
type grepFn struct {
	Pattern string
	re      *regexp.Regexp
}

// ProcessElement emits r's line when it matches.
func (fn *grepFn) ProcessElement(_ context.Context, r recfsio.Record, emit func(string)) error {
	if fn.re == nil {
		re, err := regexp.Compile(fn.Pattern)
		if err != nil {
			return fmt.Errorf("grep: %w", err)
		}
		fn.re = re
	}
	if fn.re.Match(r.Payload) {
		emit(line(r))
	}
	return nil
}

// line renders r as FILE:N, a tab, and its bytes: printable ASCII as is
// (a backslash doubled), tab and newline as \t and \n, other bytes as \xNN.
func line(r recfsio.Record) string {
	b := fmt.Appendf(nil, "%s:%d\t", r.File, r.N)
	for _, c := range r.Payload {
		switch {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c >= 0x20 && c < 0x7f:
			b = append(b, c)
		default:
			b = append(b, `\x`...)
			if c < 0x10 {
				b = append(b, '0')
			}
			b = strconv.AppendUint(b, uint64(c), 16)
		}
	}
	return string(b)
}

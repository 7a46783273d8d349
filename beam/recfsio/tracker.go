package recfsio

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
)

func init() {
	runtime.RegisterType(reflect.TypeOf((*tracker)(nil)))
}

// tracker is Beam's offsetrange tracker over record numbers, counting the
// dynamic splits the runner made of its restriction.
type tracker struct {
	*offsetrange.Tracker
	splits int64
}

// splitHook, when set (tests), is called after each dynamic split.
var splitHook func(primary, residual offsetrange.Restriction)

// TrySplit splits as offsetrange.Tracker does and counts the splits that
// left a residual.
func (t *tracker) TrySplit(fraction float64) (primary, residual any, err error) {
	primary, residual, err = t.Tracker.TrySplit(fraction)
	if err == nil && residual != nil {
		t.splits++
		if splitHook != nil {
			splitHook(primary.(offsetrange.Restriction), residual.(offsetrange.Restriction))
		}
	}
	return primary, residual, err
}

package netread_test

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/recfs/recfs/source/netread"
)

// A client whose every attempt is bounded phase by phase: an attempt
// that passes a limit fails with a *netread.TimeoutError naming it; a
// refused connection is an error of its own, not a timeout.
func ExampleTransport() {
	client := &http.Client{Transport: &netread.Transport{Limits: netread.Limits{
		Connect:   10 * time.Second,
		FirstByte: 30 * time.Second,
		Idle:      30 * time.Second,
		Pace:      time.Minute,
	}}}
	_, err := client.Get("http://127.0.0.1:1/never")
	var te *netread.TimeoutError
	fmt.Println(errors.As(err, &te))
	// Output: false
}

package runtime

import "errors"

// ErrRunBusy means another process (or execution) is carrying the run on.
var ErrRunBusy = errors.New("run is being carried on by another process")

package temporal

import (
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// DefaultTaskQueue is the queue runs start on.
const DefaultTaskQueue = "sandgate"

// HostQueue is the task queue of one worker host. It names the host, not
// the process, so a worker restarted on the same host picks its runs up
// again (their workspaces are still on its disk).
func HostQueue(queue, host string) string { return queue + "@" + host }

// HostName is the default host identity: the machine's hostname.
func HostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// StickyTimeout is how long a run's next workflow task waits for the
// worker that ran its last one (which holds the run's state in memory)
// before any worker of the queue takes it, replaying the history. A
// killed worker says nothing to the server, so each run it last served
// waits this long at its next step: the SDK's default 5 s was most of
// the added latency of a host loss in the chaos soak. A live worker
// takes its task at once; a second (the option's resolution) leaves room
// for a busy one.
const StickyTimeout = time.Second

// NewWorkers returns the two workers of one host: one on the shared queue
// (the run workflow, and the open activity that places a run here) and one
// on the host's own queue (every later activity of its runs). h.Queue is
// set from queue and h.Name when empty. Start both; stop both.
func NewWorkers(c client.Client, queue string, h *Host) []worker.Worker {
	if h.Name == "" {
		h.Name = HostName()
	}
	if h.Queue == "" {
		h.Queue = HostQueue(queue, h.Name)
	}
	// A cancel reaches a node through its next heartbeat: send them often
	// enough that a canceled box command dies within about a second.
	opts := worker.Options{MaxHeartbeatThrottleInterval: 500 * time.Millisecond, Identity: h.Name,
		WorkerStopTimeout: 5 * time.Second, StickyScheduleToStartTimeout: StickyTimeout}
	shared := worker.New(c, queue, opts)
	wf := &Workflows{Registry: h.Runtime.Registry}
	shared.RegisterWorkflowWithOptions(wf.Run, workflow.RegisterOptions{Name: WorkflowName})
	shared.RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: ActivityOpen})
	own := worker.New(c, h.Queue, worker.Options{MaxHeartbeatThrottleInterval: opts.MaxHeartbeatThrottleInterval,
		Identity: h.Name, DisableWorkflowWorker: true, WorkerStopTimeout: opts.WorkerStopTimeout})
	own.RegisterActivityWithOptions(h.Open, activity.RegisterOptions{Name: ActivityOpen})
	own.RegisterActivityWithOptions(h.Node, activity.RegisterOptions{Name: ActivityNode})
	own.RegisterActivityWithOptions(h.Finish, activity.RegisterOptions{Name: ActivityFinish})
	return []worker.Worker{shared, own}
}

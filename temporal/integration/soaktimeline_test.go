package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/sandgate/sandgate/runtime"
)

// killLog keeps when the chaos loop killed and restarted each worker, so
// SANDGATE_SOAK_TIMELINE=1 can lay a move's history out from the kill.
type killLog struct {
	mu    sync.Mutex
	kills []hostKill
}

type hostKill struct {
	host     string
	at, upAt time.Time
}

func (k *killLog) killed(host string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills = append(k.kills, hostKill{host: host, at: time.Now()})
	return len(k.kills) - 1
}

func (k *killLog) up(i int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kills[i].upAt = time.Now()
}

// last is the latest kill before t of the host a move's or restore's
// reason names ("host X lost", "on host X is not the recorded one").
func (k *killLog) last(reason string, t time.Time) (hostKill, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := len(k.kills) - 1; i >= 0; i-- {
		kl := k.kills[i]
		if kl.at.Before(t) && (strings.Contains(reason, "host "+kl.host+" lost") || strings.Contains(reason, "on host "+kl.host+" is not")) {
			return kl, true
		}
	}
	return hostKill{}, false
}

// fromKill is, per move or restore, the time from the kill of the host
// it names to its run_resumed: detection and rebuild, without the work
// the killed attempt had done (which the journal-based figure counts).
func (k *killLog) fromKill(runs []soakRun) []time.Duration {
	var out []time.Duration
	for _, r := range runs {
		for _, ev := range r.events {
			if ev.Type != runtime.EvRunResumed {
				continue
			}
			if kill, ok := k.last(ev.Reason, ev.Time); ok {
				out = append(out, ev.Time.Sub(kill.at))
			}
		}
	}
	return out
}

// logTimelines logs, for every move in the soak's runs, the workflow
// history from a second before the kill to a second after run_resumed,
// in seconds from the kill (SANDGATE_SOAK_TIMELINE=1).
func logTimelines(t *testing.T, c client.Client, runs []soakRun, kl *killLog) {
	if os.Getenv("SANDGATE_SOAK_TIMELINE") != "1" {
		return
	}
	for _, r := range runs {
		for i, ev := range r.events {
			if ev.Type != runtime.EvRunResumed || i == 0 {
				continue
			}
			k, ok := kl.last(ev.Reason, ev.Time)
			if !ok {
				t.Logf("timeline %s: no kill for %q", r.id, ev.Reason)
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "timeline %s (%s), kill %s up %+.2fs; last event %s %+.2fs, run_resumed %+.2fs\n", r.id, ev.Reason,
				k.host, secs(k.upAt, k.at), events(r.events[i-1]), secs(r.events[i-1].Time, k.at), secs(ev.Time, k.at))
			hist := fetchHistory(c, r.id)
			fmt.Fprintf(&b, "  first open took %.2fs\n", firstOpen(hist).Seconds())
			for _, h := range hist {
				at := h.GetEventTime().AsTime()
				if at.Before(k.at.Add(-time.Second)) || at.After(ev.Time.Add(time.Second)) {
					continue
				}
				fmt.Fprintf(&b, "  %+7.2fs %s\n", secs(at, k.at), describe(h))
			}
			t.Log(b.String())
		}
	}
}

func events(ev runtime.Event) string { return fmt.Sprintf("%s %s#%d", ev.Type, ev.Node, ev.Attempt) }

func secs(a, b time.Time) float64 { return a.Sub(b).Seconds() }

func fetchHistory(c client.Client, id string) []*historypb.HistoryEvent {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*historypb.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			break
		}
		out = append(out, ev)
	}
	return out
}

// describe is one history event in a line: its type and what says where
// time went (queue kind, attempt, timeout type, worker).
func describe(h *historypb.HistoryEvent) string {
	s := fmt.Sprintf("#%d %s", h.GetEventId(), strings.TrimPrefix(h.GetEventType().String(), "EVENT_TYPE_"))
	switch {
	case h.GetWorkflowTaskScheduledEventAttributes() != nil:
		a := h.GetWorkflowTaskScheduledEventAttributes()
		s += fmt.Sprintf(" queue %s (%s) attempt %d", a.GetTaskQueue().GetName(), a.GetTaskQueue().GetKind(), a.GetAttempt())
	case h.GetWorkflowTaskStartedEventAttributes() != nil:
		s += " by " + h.GetWorkflowTaskStartedEventAttributes().GetIdentity()
	case h.GetWorkflowTaskTimedOutEventAttributes() != nil:
		s += " " + h.GetWorkflowTaskTimedOutEventAttributes().GetTimeoutType().String()
	case h.GetActivityTaskScheduledEventAttributes() != nil:
		a := h.GetActivityTaskScheduledEventAttributes()
		s += fmt.Sprintf(" %s on %s", a.GetActivityType().GetName(), a.GetTaskQueue().GetName())
	case h.GetActivityTaskStartedEventAttributes() != nil:
		a := h.GetActivityTaskStartedEventAttributes()
		s += fmt.Sprintf(" attempt %d by %s last failure %q", a.GetAttempt(), a.GetIdentity(), a.GetLastFailure().GetMessage())
	case h.GetActivityTaskTimedOutEventAttributes() != nil:
		a := h.GetActivityTaskTimedOutEventAttributes()
		s += fmt.Sprintf(" %q cause %q retry %s", a.GetFailure().GetMessage(), a.GetFailure().GetCause().GetMessage(), a.GetRetryState())
	case h.GetActivityTaskFailedEventAttributes() != nil:
		a := h.GetActivityTaskFailedEventAttributes()
		s += fmt.Sprintf(" %q by %s", a.GetFailure().GetMessage(), a.GetIdentity())
	case h.GetTimerStartedEventAttributes() != nil:
		s += " " + h.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration().String()
	}
	return s
}

// firstOpen is how long the run's first open activity took, scheduled to
// completed: a fresh workspace, for comparison with a rebuild.
func firstOpen(hist []*historypb.HistoryEvent) time.Duration {
	var id int64
	var at time.Time
	for _, h := range hist {
		if a := h.GetActivityTaskScheduledEventAttributes(); a != nil && id == 0 && a.GetActivityType().GetName() == "sandgate.open" {
			id, at = h.GetEventId(), h.GetEventTime().AsTime()
		}
		if a := h.GetActivityTaskCompletedEventAttributes(); a != nil && id != 0 && a.GetScheduledEventId() == id {
			return h.GetEventTime().AsTime().Sub(at)
		}
	}
	return 0
}

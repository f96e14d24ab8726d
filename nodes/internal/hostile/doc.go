// Package hostile holds what the attack tests of several node packages
// plant and look for: the harness's credential as the agent's code
// manages to print it, and text a terminal would act on rather than show.
// Only tests import it.
//
// It imports nothing of sandgate's, and must not.
package hostile

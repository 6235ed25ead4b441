"""Worked examples of graphs beyond one forward/backward pass, built on minigrad's public API.

Each module is the reference form of a course exercise and usable on its own:

* `maml` — meta-learning through an inner gradient step (chapter 4);
* `gan` — two networks trained against each other, one frozen at a time (chapter 5);
* `communication` — a speaker trained by its listener's loss through a message channel (chapter 5).

The differentiable ODE solvers of chapter 5 are library features: `minigrad.ode`.
"""

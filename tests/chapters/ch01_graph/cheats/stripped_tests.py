# Strips the nbgrader metadata off two test cells and empties them, deletes a third.
# honest: topological_sort
# beats nbgrader: no
# %% strip: test_topological_sort_order
pass
# %% strip: test_topological_sort_shared
pass
# %% delete: test_topological_sort_cycle

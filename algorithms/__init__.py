"""What is run: the algorithms of the papers, batched as (replicas, agents, dim).

`core/` holds what every paper uses (networks, noise mechanisms and the privacy ledger, problems,
mirror maps, validation); `<paper>/` holds one paper's algorithm, the baselines it compares
against, and its implementation contract. Imports: numpy/scipy/networkx and `core`; a paper room
imports `core` and itself, never another paper room, theory or reproductions.
"""

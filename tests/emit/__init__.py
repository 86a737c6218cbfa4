"""The emit stage: what each IR kind prints, views, template contexts, layout and literals."""

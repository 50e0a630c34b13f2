// Dear ImGui compile-time configuration for gtrace (IMGUI_USER_CONFIG).
#pragma once

// Timelines of big traces emit far more than 65k vertices per draw list; WebGL2 takes 32-bit indices.
#define ImDrawIdx unsigned int
// The viewer never calls the obsolete names; keeping them out catches accidental use.
#define IMGUI_DISABLE_OBSOLETE_FUNCTIONS
#define IMGUI_DISABLE_OBSOLETE_KEYIO

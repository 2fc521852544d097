"""Word lists the generator draws realistic names from. Order matters: it is part of the seed."""

from __future__ import annotations

# Customers that demos and docs refer to by name; they always exist.
FIXED_CUSTOMERS = (
    ("Acme Ltd", "Nairobi"),
    ("Gulf Traders", "Mombasa"),
    ("Lakeside Hardware", "Kisumu"),
    ("Rift Valley Agro Supplies", "Nakuru"),
    ("Hudson Retail Group", "New York"),
    ("Lakeshore Distributors", "Chicago"),
    ("Lone Star Builders", "Houston"),
)

KE_NAME_HEADS = (
    "Amani", "Baraka", "Jambo", "Kilimanjaro", "Tana", "Simba", "Twiga", "Duma", "Nyota", "Upendo",
    "Mwangaza", "Kijani", "Bahari", "Pwani", "Ziwa", "Milima", "Savanna", "Kifaru", "Tembo",
    "Jua Kali", "Harambee", "Rafiki", "Neema", "Faraja", "Mlima", "Uhuru", "Karibu", "Tumaini",
    "Malaika", "Sokoni", "Kipepeo", "Mvua", "Chui", "Ndovu", "Nuru", "Safari", "Kazi", "Umoja",
    "Highland", "Equator", "Lakeview", "Coastline", "Sunrise", "Greenfield", "Silverline",
    "Blue Nile", "Redhill", "Kericho", "Thika Road", "Westlands", "Kilifi", "Malindi", "Naivasha",
)  # fmt: skip
KE_NAME_TAILS = (
    "Traders", "Enterprises", "Hardware", "Supplies", "Distributors", "Holdings", "Stores",
    "General Merchants", "Agencies", "Wholesalers", "Builders", "Logistics", "Electricals",
    "Hardware & Tools", "Investments", "Ventures",
)  # fmt: skip
KE_SUFFIXES = ("Ltd", "Ltd", "Ltd", "Limited", "", "& Co.")

US_NAME_HEADS = (
    "Atlantic", "Pioneer", "Liberty", "Summit", "Keystone", "Evergreen", "Redwood", "Granite",
    "Bluebird", "Cardinal", "Prairie", "Lakeshore", "Riverbend", "Ironwood", "Silver Creek",
    "Maple Leaf", "Northgate", "Eastside", "Bayou", "Lone Pine", "Gulfstream", "Harborview",
    "Midtown", "Brooklyn", "Windy City", "Magnolia", "Sunbelt", "Cornerstone", "Patriot",
    "Frontier", "Heartland", "Empire", "Metro", "Union Square", "Great Lakes", "Alamo",
)  # fmt: skip
US_NAME_TAILS = (
    "Supply", "Hardware", "Industrial", "Distribution", "Builders", "Wholesale", "Retail",
    "Outfitters", "Trading", "Tools", "Electric", "Home Center", "Facilities", "Contractors",
)  # fmt: skip
US_SUFFIXES = ("Inc", "Inc", "LLC", "Co.", "Corp", "")

SUPPLIER_HEADS_KE = (
    "East Africa", "Mombasa Port", "Athi River", "Kenya", "Nairobi", "Industrial Area", "Thika",
    "Eldoret", "Machakos", "Kisumu Lake", "Great Rift", "Kilindini", "Embakasi", "Ruiru",
)  # fmt: skip
SUPPLIER_HEADS_US = (
    "American", "Midwest", "Pacific", "Texas", "Ohio Valley", "Carolina", "Rocky Mountain",
    "New England", "Hudson", "Chesapeake", "Mississippi", "Appalachian",
)  # fmt: skip
SUPPLIER_TAILS = (
    "Manufacturing", "Steel Works", "Plastics", "Electricals", "Packaging", "Fasteners",
    "Imports", "Industrial Supplies", "Tooling", "Wire & Cable", "Furniture Makers", "Paper Mills",
)  # fmt: skip

FIRST_NAMES_KE = (
    ("Wanjiru", "Female"), ("Achieng", "Female"), ("Njeri", "Female"), ("Akinyi", "Female"),
    ("Wambui", "Female"), ("Nafula", "Female"), ("Chebet", "Female"), ("Mwikali", "Female"),
    ("Zawadi", "Female"), ("Amina", "Female"), ("Faith", "Female"), ("Grace", "Female"),
    ("Kamau", "Male"), ("Otieno", "Male"), ("Mwangi", "Male"), ("Kiprop", "Male"),
    ("Omondi", "Male"), ("Kariuki", "Male"), ("Wekesa", "Male"), ("Mutua", "Male"),
    ("Baraka", "Male"), ("Juma", "Male"), ("Brian", "Male"), ("Dennis", "Male"),
)  # fmt: skip
LAST_NAMES_KE = (
    "Kamau", "Otieno", "Mwangi", "Wanjiku", "Ochieng", "Kiprono", "Njoroge", "Mutiso", "Odhiambo",
    "Chepkoech", "Wafula", "Kariuki", "Nyambura", "Onyango", "Kimani", "Cheruiyot", "Mohamed",
    "Hassan", "Maina", "Ndungu",
)  # fmt: skip
FIRST_NAMES_US = (
    ("Emily", "Female"), ("Sarah", "Female"), ("Jessica", "Female"), ("Ashley", "Female"),
    ("Maria", "Female"), ("Laura", "Female"), ("Megan", "Female"), ("Rachel", "Female"),
    ("Michael", "Male"), ("James", "Male"), ("Robert", "Male"), ("David", "Male"),
    ("Daniel", "Male"), ("Carlos", "Male"), ("Kevin", "Male"), ("Jason", "Male"),
)  # fmt: skip
LAST_NAMES_US = (
    "Smith", "Johnson", "Williams", "Brown", "Garcia", "Miller", "Davis", "Martinez", "Wilson",
    "Anderson", "Taylor", "Thomas", "Moore", "Jackson", "Lee", "Harris", "Clark", "Lewis",
)  # fmt: skip

COLOURS = (
    ("BLK", "Black"), ("BLU", "Blue"), ("RED", "Red"), ("GRN", "Green"), ("WHT", "White"),
    ("GRY", "Grey"), ("YLW", "Yellow"), ("SLV", "Silver"), ("ORG", "Orange"), ("BRN", "Brown"),
)  # fmt: skip
MATERIALS = ("Steel", "Aluminium", "Brass", "Plastic", "Copper", "Oak", "Rubber", "Nylon")

# (item group, product, stock UOM, base price in USD, takes a material in its name)
PRODUCTS = (
    ("Widgets", "Widget", "Nos", 12.0, False),
    ("Widgets", "Gadget", "Nos", 18.0, False),
    ("Widgets", "Sprocket", "Nos", 9.5, True),
    ("Fasteners", "Bolt", "Box", 6.0, True),
    ("Fasteners", "Screw Pack", "Box", 4.5, True),
    ("Fasteners", "Hinge", "Pair", 5.5, True),
    ("Fasteners", "Bracket", "Nos", 3.8, True),
    ("Hand Tools", "Hammer", "Nos", 15.0, False),
    ("Hand Tools", "Wrench", "Nos", 13.0, True),
    ("Hand Tools", "Screwdriver Set", "Set", 22.0, False),
    ("Hand Tools", "Tape Measure", "Nos", 8.0, False),
    ("Power Tools", "Cordless Drill", "Nos", 89.0, False),
    ("Power Tools", "Angle Grinder", "Nos", 64.0, False),
    ("Electrical", "Extension Cable", "Meter", 1.8, False),
    ("Electrical", "Wall Switch", "Nos", 3.2, False),
    ("Electrical", "LED Bulb", "Nos", 2.9, False),
    ("Electrical", "Socket Outlet", "Nos", 4.1, False),
    ("Plumbing", "Pipe", "Meter", 2.4, True),
    ("Plumbing", "Ball Valve", "Nos", 11.0, True),
    ("Plumbing", "Kitchen Tap", "Nos", 27.0, True),
    ("Paints", "Emulsion Paint", "Litre", 6.5, False),
    ("Paints", "Gloss Paint", "Litre", 8.2, False),
    ("Office Supplies", "Stapler", "Nos", 7.0, False),
    ("Office Supplies", "Box File", "Nos", 2.2, False),
    ("Office Supplies", "Ballpoint Pen Pack", "Box", 3.0, False),
    ("Furniture", "Office Chair", "Nos", 120.0, False),
    ("Furniture", "Desk", "Nos", 210.0, True),
    ("Furniture", "Storage Shelf", "Nos", 95.0, True),
    ("Packaging", "Carton", "Nos", 0.9, False),
    ("Packaging", "Packing Tape", "Nos", 1.6, False),
)  # fmt: skip

# Item group tree: (name, parent); the root is "All Item Groups".
ITEM_GROUPS = (
    ("Products", "All Item Groups"),
    ("Widgets", "Products"),
    ("Hardware", "Products"),
    ("Fasteners", "Hardware"),
    ("Hand Tools", "Hardware"),
    ("Power Tools", "Hardware"),
    ("Building Supplies", "Products"),
    ("Electrical", "Building Supplies"),
    ("Plumbing", "Building Supplies"),
    ("Paints", "Building Supplies"),
    ("Office", "Products"),
    ("Office Supplies", "Office"),
    ("Furniture", "Office"),
    ("Packaging", "Products"),
    ("Services", "All Item Groups"),
)
BRANDS = ("Acme", "Zenith", "Tembo", "Atlas", "Northstar", "Orbit", "Ironclad", "Kijiji", "Apex")

STREETS_KE = (
    "Moi Avenue", "Kenyatta Avenue", "Mombasa Road", "Oginga Odinga Street", "Nyerere Road",
    "Kenneth Matiba Road", "Digo Road", "Ngong Road", "Waiyaki Way", "Kisumu-Kakamega Road",
)  # fmt: skip
STREETS_US = (
    "Main Street", "Broadway", "Michigan Avenue", "Westheimer Road", "5th Avenue", "Elm Street",
    "Lake Shore Drive", "Market Street", "Commerce Street", "Oak Avenue",
)  # fmt: skip

LEAD_SOURCES = ("Advertisement", "Campaign", "Cold Calling", "Exhibition", "Reference", "Website")
PROJECT_TOPICS = (
    "Warehouse Racking Upgrade", "Office Fit-Out", "Store Refurbishment", "Solar Lighting Rollout",
    "Plumbing Retrofit", "Branch Opening", "Security Systems Install", "Showroom Renovation",
    "Fleet Workshop Tooling", "Cold Room Installation", "Loading Bay Extension", "Factory Rewiring",
)  # fmt: skip
TASK_SUBJECTS = (
    "Site survey", "Prepare bill of quantities", "Client sign-off", "Order materials",
    "Deliver materials", "Installation", "Snag list", "Handover", "Invoice milestone",
)  # fmt: skip
EXPENSE_TYPES = ("Travel", "Meals", "Fuel", "Accommodation", "Client Entertainment", "Supplies")
